using System;
using System.Threading;
using Myriad.IO;
using Xunit;
using Xunit.Abstractions;

namespace Myriad.Tests.IO.Review;

/// <summary>
/// Review: IoDriver.Wake checks _disposed and then writes the eventfd with no hold on it; a Dispose
/// that closes the eventfd in between, and a new descriptor that takes its number, receive the
/// 8-byte wake write. Here the new descriptor is an eventfd, so a stray write shows as a counter.
/// </summary>
public sealed class ReviewWakeAfterCloseTests(ITestOutputHelper output)
{
    private static volatile IoDriver? s_current;

    [Fact]
    public void Review_Wake_RacingDispose_WritesIntoAReusedDescriptor()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        bool stop = false;
        var wakers = new Thread[6];
        for (int i = 0; i < wakers.Length; i++)
        {
            wakers[i] = new Thread(() =>
            {
                while (!Volatile.Read(ref stop))
                {
                    s_current?.Wake();
                }
            });
            wakers[i].Start();
        }

        int hits = 0;
        int rounds = 0;
        DateTime deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        try
        {
            while (DateTime.UtcNow < deadline && hits == 0)
            {
                rounds++;
                IoDriver driver = IoDriver.Create();
                s_current = driver;
                Thread.Yield();
                driver.Dispose(); // closes its eventfd and epoll descriptor
                // The driver made its epoll descriptor (N) then its eventfd (N+1); both are closed now.
                int filler = LinuxNative.EventFd(0, LinuxNative.CloExec | LinuxNative.NonBlock); // takes N
                int fresh = LinuxNative.EventFd(0, LinuxNative.CloExec | LinuxNative.NonBlock); // takes N+1, the old eventfd's number
                LinuxNative.Close(filler);
                s_current = null;
                Thread.Sleep(0);
                using (var stream = new System.IO.FileStream(new Microsoft.Win32.SafeHandles.SafeFileHandle(fresh, ownsHandle: true), System.IO.FileAccess.Read, 0))
                {
                    byte[] value = new byte[8];
                    try
                    {
                        if (stream.Read(value, 0, 8) == 8 && BitConverter.ToUInt64(value) != 0)
                        {
                            hits++;
                        }
                    }
                    catch (System.IO.IOException)
                    {
                        // EAGAIN: nothing was written into it
                    }
                }
            }
        }
        finally
        {
            Volatile.Write(ref stop, true);
            foreach (Thread waker in wakers)
            {
                waker.Join();
            }
        }

        output.WriteLine($"rounds {rounds}, hits {hits}");
        Assert.True(hits == 0, $"a Wake (rounds {rounds}) wrote into a descriptor opened after the driver's Dispose ({hits} in {rounds} rounds)");
    }
}
