using System;
using System.Collections.Generic;
using System.IO;
using Myriad.IO;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.IO;

/// <summary>
/// Operations failed by a disposal each get an exception of their own, as <see cref="System.Net.Sockets.Socket"/>'s
/// do: one shared instance, rethrown by every later operation on every socket, would collect every
/// rethrow's stack frames (unrelated connections' included) and be mutated by concurrent throws.
/// </summary>
public sealed class JobTcpDisposedExceptionTests
{
    [Fact]
    public void Operations_AfterConnectionDispose_EachThrowAFreshObjectDisposed()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        Job<JobTcpConnection> accepting = listener.AcceptAsync();
        using JobTcpConnection client = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).Wait();
        JobTcpConnection server = accepting.Wait();
        Assert.True(server.UsesIoDriver);
        Job<int> pending = server.ReadAsync(new byte[8]);
        Stream view = server.AsStream(ownsConnection: false);
        server.Dispose();

        var errors = new List<Exception?> { Record.Exception(() => pending.Wait()) };
        for (int i = 0; i < 3; i++)
        {
            errors.Add(Record.Exception(() => server.ReadAsync(new byte[8]).Wait()));
            errors.Add(Record.Exception(() => server.WriteAsync(new byte[8]).Wait()));
            errors.Add(Record.Exception(() => view.Read(new byte[8])));
            errors.Add(Record.Exception(() => view.Write(new byte[8])));
        }

        AssertFreshObjectDisposed(errors, nameof(JobTcpConnection), message: null);
    }

    [Fact]
    public void Operations_AfterRuntimeDispose_EachThrowAFreshObjectDisposedNamingTheRuntime()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        var pairs = new List<JobTcpConnection>();
        for (int i = 0; i < 2; i++)
        {
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            pairs.Add(JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).Wait());
            pairs.Add(accepting.Wait());
        }

        Job<int> pendingA = pairs[1].ReadAsync(new byte[8]);
        Job<int> pendingB = pairs[3].ReadAsync(new byte[8]);
        runtime.Dispose();

        var errors = new List<Exception?>
        {
            Record.Exception(() => pendingA.Wait()),
            Record.Exception(() => pendingB.Wait()),
        };
        for (int i = 0; i < 3; i++)
        {
            foreach (JobTcpConnection connection in pairs)
            {
                errors.Add(Record.Exception(() => connection.ReadAsync(new byte[8]).Wait()));
                errors.Add(Record.Exception(() => connection.WriteAsync(new byte[8]).Wait()));
            }

            errors.Add(Record.Exception(() => listener.AcceptAsync().Wait()));
        }

        AssertFreshObjectDisposed(errors, typeof(MultiThreadRuntime).Name, message: "The runtime that drives this socket's I/O was disposed.");
        foreach (JobTcpConnection connection in pairs)
        {
            connection.Dispose();
        }
    }

    [Fact]
    public void TryAcceptNative_SocketClosedAfterTheAbortCheck_ReportsTheListenersObjectDisposed()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        // An accept attempt whose abort check passed just before the listener's Dispose: its
        // accept4 then finds the socket handle closed (DangerousAddRef throws, naming the
        // SafeSocketHandle), and must report the listener's disposal instead.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        Assert.True(listener.UsesIoDriver);
        listener.Dispose();

        Assert.True(listener.TryAcceptNative(out JobTcpConnection? connection, out Exception? error));
        Assert.Null(connection);
        AssertFreshObjectDisposed([error], nameof(JobTcpListener), message: null);
    }

    private static void AssertFreshObjectDisposed(List<Exception?> errors, string objectName, string? message)
    {
        var seen = new HashSet<Exception>(ReferenceEqualityComparer.Instance);
        foreach (Exception? error in errors)
        {
            ObjectDisposedException disposed = Assert.IsType<ObjectDisposedException>(error);
            Assert.Equal(objectName, disposed.ObjectName);
            if (message is not null)
            {
                Assert.StartsWith(message, disposed.Message, StringComparison.Ordinal);
            }

            Assert.True(seen.Add(disposed), "one exception instance was thrown by two operations");
        }
    }
}
