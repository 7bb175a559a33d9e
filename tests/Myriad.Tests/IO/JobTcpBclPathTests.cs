using System;
using System.Threading.Tasks;
using Myriad.IO;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.IO;

/// <summary>
/// The BCL path (a <see cref="CurrentThreadRuntime"/> here) keeps the failure contract of the driver's
/// path: disposal fails pending and later operations with <see cref="ObjectDisposedException"/>, in
/// the job rather than at the call.
/// </summary>
public sealed class JobTcpBclPathTests
{
    [Fact]
    public void ReadAsync_DisposedWhilePending_ThrowsObjectDisposed()
    {
        using var runtime = new CurrentThreadRuntime();
        Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Assert.False(listener.UsesIoDriver);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            JobTcpConnection server = await accepting;
            Job<int> pending = JobRuntime.Current!.Spawn(server, static async s => await s.ReadAsync(new byte[8]));
            await Job.Delay(TimeSpan.FromMilliseconds(20)); // the read is parked in the BCL
            server.Dispose();
            await Assert.ThrowsAsync<ObjectDisposedException>(() => pending.AsTask());
        });
    }

    [Fact]
    public void WriteAsync_DisposedWhilePending_ThrowsObjectDisposed()
    {
        using var runtime = new CurrentThreadRuntime();
        Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            using JobTcpConnection server = await accepting;

            // Nobody reads: the kernel's buffers fill and the write waits.
            Job pending = JobRuntime.Current!.Spawn(client, static async c => await c.WriteAsync(new byte[64 << 20]));
            await Job.Delay(TimeSpan.FromMilliseconds(50));
            client.Dispose();
            await Assert.ThrowsAsync<ObjectDisposedException>(() => pending.AsTask());
        });
    }

    [Fact]
    public void AcceptAsync_ListenerDisposedWhilePending_ThrowsObjectDisposed()
    {
        using var runtime = new CurrentThreadRuntime();
        Bounded.Run(runtime, async () =>
        {
            var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> pending = JobRuntime.Current!.Spawn(listener, static async l => await l.AcceptAsync());
            await Job.Delay(TimeSpan.FromMilliseconds(20));
            listener.Dispose();
            await Assert.ThrowsAsync<ObjectDisposedException>(() => pending.AsTask());
        });
    }

    [Fact]
    public void ReadWrite_AfterDispose_FaultTheJobInsteadOfThrowingAtTheCall()
    {
        using var runtime = new CurrentThreadRuntime();
        Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            JobTcpConnection server = await accepting;
            server.Dispose();
            Job<int> read = server.ReadAsync(new byte[8]);
            Job write = server.WriteAsync(new byte[8]);
            await Assert.ThrowsAsync<ObjectDisposedException>(() => read.AsTask());
            await Assert.ThrowsAsync<ObjectDisposedException>(() => write.AsTask());
        });
    }

    [Fact]
    public void Operations_StartedAfterDispose_NameTheConnectionOrListener()
    {
        // As on the driver's path: the BCL names its Socket, which the caller never saw.
        using var runtime = new CurrentThreadRuntime();
        Bounded.Run(runtime, async () =>
        {
            var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            JobTcpConnection server = await accepting;
            server.Dispose();
            listener.Dispose();
            ObjectDisposedException read = await Assert.ThrowsAsync<ObjectDisposedException>(() => server.ReadAsync(new byte[8]).AsTask());
            ObjectDisposedException write = await Assert.ThrowsAsync<ObjectDisposedException>(() => server.WriteAsync(new byte[8]).AsTask());
            ObjectDisposedException accept = await Assert.ThrowsAsync<ObjectDisposedException>(() => listener.AcceptAsync().AsTask());
            Assert.Equal(nameof(JobTcpConnection), read.ObjectName);
            Assert.Equal(nameof(JobTcpConnection), write.ObjectName);
            Assert.Equal(nameof(JobTcpListener), accept.ObjectName);
        });
    }
}
