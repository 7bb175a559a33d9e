using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.IO;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.IO;

/// <summary>
/// Connections and listeners dropped without <c>Dispose</c>: their sockets' finalizers close the
/// descriptors, and their driver registrations must go too once they are collected, as a dropped
/// <see cref="System.Net.Sockets.Socket"/> leaves nothing behind in the BCL's engine.
/// </summary>
[Collection(HeavyCollection.Name)]
public sealed class JobTcpAbandonedTests
{
    [Fact]
    public void Connections_DroppedWithoutDispose_ReleaseTheirRegistrationsOnceCollected()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        IoDriver driver = runtime.IoDriverOrNull!;
        int baseline = driver.RegisteredCount;
        int descriptors = IoTestSupport.OpenDescriptors();

        for (int round = 0; round < 5; round++)
        {
            DropConnections(runtime, listener, 200);
            DropListener(runtime);
        }

        Assert.True(driver.RegisteredCount >= baseline);
        int registered = CollectUntil(() => driver.RegisteredCount == baseline, () => driver.RegisteredCount);
        Assert.Equal(baseline, registered);
        Assert.InRange(IoTestSupport.OpenDescriptors(), 0, descriptors + 16);

        // The driver still works, for new sockets that may have reused the dropped ones' numbers.
        Job<JobTcpConnection> accepting = listener.AcceptAsync();
        using JobTcpConnection client = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).Wait();
        using JobTcpConnection server = accepting.Wait();
        System.Threading.Tasks.Task<int> read = server.ReadAsync(new byte[4]).AsTask();
        client.WriteAsync(new byte[] { 1, 2, 3 }).Wait();
        Assert.True(read.Wait(TimeSpan.FromSeconds(10)), "a new socket's read was never woken");
        Assert.Equal(3, read.Result);
    }

    [Fact]
    public void Finalizer_AfterTheDescriptorWasClosedAndReused_LeavesTheNewSocketInEpoll()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
        IoDriver driver = runtime.IoDriverOrNull!;
        for (int attempt = 0; ; attempt++)
        {
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection oldClient = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).Wait();
            JobTcpConnection dropped = accepting.Wait();
            int number = (int)dropped.Socket.Handle;
            int registered = driver.RegisteredCount;

            // The order a collection may pick: the socket's own finalizer closes the descriptor
            // first, and a new socket gets its number before the registration's finalizer runs.
            dropped.Socket.Dispose();
            accepting = listener.AcceptAsync();
            using JobTcpConnection client = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).Wait();
            using JobTcpConnection server = accepting.Wait();
            JobTcpConnection? reused = (int)client.Socket.Handle == number ? client : (int)server.Socket.Handle == number ? server : null;
            if (reused is null)
            {
                Assert.True(attempt < 20, "the kernel never gave the closed descriptor's number to a new socket");
                continue;
            }

            JobTcpConnection peer = ReferenceEquals(reused, client) ? server : client;
            System.Threading.Tasks.Task<int> read = reused.ReadAsync(new byte[4]).AsTask(); // parks: no data yet
            dropped.RegistrationReleaser!.ReleaseAbandoned();
            Assert.Equal(registered + 1, driver.RegisteredCount); // two new sockets, one released

            peer.WriteAsync(new byte[] { 1, 2, 3 }).Wait();
            Assert.True(read.Wait(TimeSpan.FromSeconds(5)), "the new socket was removed from epoll by the old registration");
            Assert.Equal(3, read.Result);
            return;
        }
    }

    /// <summary>Opens <paramref name="count"/> pairs, uses them a little in several ways, and drops them.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropConnections(MultiThreadRuntime runtime, JobTcpListener listener, int count)
    {
        byte[] one = new byte[1];
        for (int i = 0; i < count; i++)
        {
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            JobTcpConnection client = JobTcpConnection.ConnectAsync(listener.LocalEndPoint, runtime).Wait();
            JobTcpConnection server = accepting.Wait();
            Assert.True(server.UsesIoDriver);
            switch (i % 4)
            {
                case 0:
                    // A read that had to wait (the pooled operation cell was parked and completed).
                    Job<int> read = server.ReadAsync(one);
                    client.WriteAsync(one).Wait();
                    read.Wait();
                    break;
                case 1:
                    // A cancelable read that was cancelled while parked.
                    using (var cts = new CancellationTokenSource())
                    {
                        Job<int> canceled = server.ReadAsync(one, cts.Token);
                        cts.Cancel();
                        Assert.ThrowsAny<OperationCanceledException>(() => canceled.Wait());
                    }

                    break;
                case 2:
                    // Through a Stream view, dropped too.
                    Stream view = client.AsStream();
                    view.Write(one);
                    Assert.Equal(1, server.AsStream().Read(one));
                    break;
                default:
                    // Never used.
                    break;
            }
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropListener(MultiThreadRuntime runtime) =>
        Assert.True(JobTcpListener.Bind(IoTestSupport.Loopback, runtime).UsesIoDriver);

    private static int CollectUntil(Func<bool> done, Func<int> value)
    {
        for (int i = 0; i < 50 && !done(); i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            if (!done())
            {
                Thread.Sleep(20);
            }
        }

        return value();
    }
}
