using System;
using Myriad.IO;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.IO;

/// <summary>The driver's own contract, driven directly (the sockets' side is in the JobTcp tests).</summary>
public sealed class IoDriverTests
{
    [Fact]
    public void Register_AfterDispose_ThrowsObjectDisposedNamingTheRuntime()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        // A socket created on a thread that found the driver just before the last worker closed it:
        // the driver is internal, so the exception names the runtime, as docs/io.md promises.
        IoDriver driver = IoDriver.Create();
        driver.Dispose();
        int fd = LinuxNative.EventFd(0, LinuxNative.CloExec | LinuxNative.NonBlock);
        try
        {
            ObjectDisposedException disposed = Assert.Throws<ObjectDisposedException>(() => driver.Register(fd));
            Assert.Equal(nameof(MultiThreadRuntime), disposed.ObjectName);
            Assert.StartsWith("The runtime that drives this socket's I/O was disposed.", disposed.Message, StringComparison.Ordinal);
            Assert.Equal(0, driver.RegisteredCount);
        }
        finally
        {
            LinuxNative.Close(fd);
        }
    }
}
