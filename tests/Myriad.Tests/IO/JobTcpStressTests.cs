using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using Myriad.IO;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.IO;

[Collection(HeavyCollection.Name)]
public sealed class JobTcpStressTests
{
    private static MultiThreadRuntime NewRuntime() => new(new RuntimeOptions { WorkerCount = 2 });

    [Fact]
    public void ConnectAccept_TenThousandOpenedAndClosed_LeaveNoDescriptorOrRegistration()
    {
        const int total = 10_000;
        const int batch = 100;
        using var runtime = NewRuntime();
        int before = IoTestSupport.OpenDescriptors();
        (int registeredAfter, int served) = Bounded.Run(runtime, async () =>
        {
            var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            int baseline = runtime.IoDriverOrNull?.RegisteredCount ?? 0;
            int served = 0;
            Job server = JobRuntime.Current!.Spawn(async () =>
            {
                for (int i = 0; i < total; i++)
                {
                    using JobTcpConnection peer = await listener.AcceptAsync();
                    byte[] one = new byte[1];
                    if (await peer.ReadAsync(one) == 1)
                    {
                        await peer.WriteAsync(one);
                    }

                    Interlocked.Increment(ref served);
                }
            });

            byte[] buffer = new byte[1];
            for (int i = 0; i < total; i += batch)
            {
                JobTcpConnection[] clients = new JobTcpConnection[batch];
                for (int c = 0; c < batch; c++)
                {
                    clients[c] = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
                    await clients[c].WriteAsync(buffer);
                }

                foreach (JobTcpConnection client in clients)
                {
                    Assert.Equal(1, await client.ReadAsync(buffer));
                    client.Dispose();
                }
            }

            await server;
            listener.Dispose();
            return ((runtime.IoDriverOrNull?.RegisteredCount ?? 0) - baseline, served);
        }, TimeSpan.FromSeconds(120));

        Assert.Equal(total, served);
        Assert.Equal(OperatingSystem.IsLinux() ? -1 : 0, registeredAfter); // the listener was deregistered too
        if (before >= 0)
        {
            // A few descriptors come and go with the runtime's own machinery; 10k leaked would show.
            Assert.InRange(IoTestSupport.OpenDescriptors(), 0, before + 16);
        }
    }

    [Fact]
    public void ReadAsync_CancelRacingData_EndsWithDataOrCancellationNeverHangs()
    {
        using var runtime = NewRuntime();
        (int data, int canceled) = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            using JobTcpConnection server = await accepting;
            byte[] one = new byte[1];
            byte[] buffer = new byte[64];
            int data = 0;
            int canceled = 0;
            for (int i = 0; i < 2000; i++)
            {
                using var cts = new CancellationTokenSource();
                Job<int> read = server.ReadAsync(buffer, cts.Token);
                var canceller = new Thread(() => cts.Cancel());
                canceller.Start();
                await client.WriteAsync(one);
                try
                {
                    data += await read;
                }
                catch (OperationCanceledException)
                {
                    canceled++;
                }

                canceller.Join();
            }

            // Whatever the cancellations left unread is still there, in order, exactly once.
            client.ShutdownWrite();
            int read2;
            while ((read2 = await server.ReadAsync(buffer)) > 0)
            {
                data += read2;
            }

            return (data, canceled);
        }, TimeSpan.FromSeconds(60));

        Assert.Equal(2000, data);
        Assert.True(canceled >= 0);
    }

    [Fact]
    public void WriteAsync_DisposeRacingAFullSocket_FailsWithObjectDisposedNeverHangs()
    {
        using var runtime = NewRuntime();
        int disposedFailures = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            int failures = 0;
            for (int i = 0; i < 50; i++)
            {
                Job<JobTcpConnection> accepting = listener.AcceptAsync();
                using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
                using JobTcpConnection server = await accepting;

                // Nobody reads: the write fills both socket buffers and parks.
                Job write = client.WriteAsync(new byte[8 << 20]);
                var disposer = new Thread(client.Dispose);
                disposer.Start();
                try
                {
                    await write;
                }
                catch (ObjectDisposedException)
                {
                    failures++;
                }

                disposer.Join();
            }

            return failures;
        }, TimeSpan.FromSeconds(60));

        Assert.Equal(50, disposedFailures);
    }

    [Fact]
    public void Poller_ManyPingPongsAcrossWorkers_NoLostWakeUp()
    {
        // Two workers, one of which is often parked in the driver while the other parks on its
        // parker: every round trip needs the poller woken, or a parked worker woken for the job
        // the poller queued. A lost wake-up hangs the test (bounded).
        using var runtime = NewRuntime();
        int rounds = Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            const int pairs = 16;
            const int perPair = 300;
            int done = 0;
            Job[] jobs = new Job[pairs];
            Job[] servers = new Job[pairs];
            for (int p = 0; p < pairs; p++)
            {
                Job<JobTcpConnection> accepting = listener.AcceptAsync();
                JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
                JobTcpConnection server = await accepting;
                servers[p] = JobRuntime.Current!.Spawn(async () =>
                {
                    using JobTcpConnection s = server;
                    byte[] b = new byte[8];
                    int n;
                    while ((n = await s.ReadAsync(b)) > 0)
                    {
                        await s.WriteAsync(b.AsMemory(0, n));
                    }
                });
                jobs[p] = JobRuntime.Current!.Spawn(async () =>
                {
                    using JobTcpConnection c = client;
                    byte[] b = new byte[8];
                    for (int i = 0; i < perPair; i++)
                    {
                        await c.WriteAsync(b);
                        await IoTestSupport.ReadExactly(c, b);
                        if ((i & 63) == 0)
                        {
                            Thread.Sleep(0); // vary the interleaving a little
                        }

                        Interlocked.Increment(ref done);
                    }
                });
            }

            foreach (Job job in jobs)
            {
                await job;
            }

            foreach (Job job in servers)
            {
                await job;
            }

            return done;
        }, TimeSpan.FromSeconds(60));

        Assert.Equal(16 * 300, rounds);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)] // the BCL path (a current-thread runtime) reported a SocketException, which a loop catching IOException did not survive
    public void AcceptAsync_OutOfDescriptors_ClearErrorWhileOtherConnectionsKeepWorking(bool driver)
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using JobRuntime runtime = driver ? NewRuntime() : new CurrentThreadRuntime();
        Bounded.Run(runtime, async () =>
        {
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback);
            Job<JobTcpConnection> accepting = listener.AcceptAsync();
            using JobTcpConnection client = await JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
            using JobTcpConnection server = await accepting;
            using var late = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);

            IOException? acceptError = null;
            using (ExhaustDescriptors())
            {
                late.Connect(listener.LocalEndPoint); // no new descriptor on our side
                try
                {
                    using JobTcpConnection refused = await listener.AcceptAsync();
                }
                catch (IOException error)
                {
                    acceptError = error;
                }

                // A connect that cannot get a socket faults its job rather than throwing at the call.
                Job<JobTcpConnection> connecting = JobTcpConnection.ConnectAsync(listener.LocalEndPoint);
                await Assert.ThrowsAsync<SocketException>(async () => await connecting);

                // The established connection keeps working meanwhile.
                await client.WriteAsync(new byte[] { 42 });
                byte[] one = new byte[1];
                Assert.Equal(1, await server.ReadAsync(one));
                Assert.Equal(42, one[0]);
            }

            Assert.NotNull(acceptError);
            Assert.Contains(driver ? "errno 24" : "TooManyOpenSockets", acceptError!.Message); // EMFILE, named in the message

            // Descriptors are back: the connection waiting in the backlog is accepted now.
            using JobTcpConnection accepted = await listener.AcceptAsync();
            Assert.NotNull(accepted.RemoteEndPoint);
        });
    }

    [Fact]
    public void FirstSocketOfARuntime_OutOfDescriptorsForItsDriver_SocketExceptionAndLaterSocketsWork()
    {
        // The runtime's first socket creates its I/O driver (an epoll instance and an eventfd) and
        // starts the watchdog thread. Out of descriptors, that threw an IOException (epoll_create1)
        // or an OutOfMemoryException (the thread's start) at the call: ConnectAsync, documented to
        // fault its job, threw instead, and Bind threw neither a SocketException nor anything
        // its documentation named.
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var runtime = NewRuntime();
        using var bclListener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        bclListener.Bind(IoTestSupport.Loopback);
        bclListener.Listen(4);
        var target = (IPEndPoint)bclListener.LocalEndPoint!;

        Job<JobTcpConnection> connecting;
        Exception? bindError = null;
        using (ExhaustDescriptors())
        {
            connecting = JobTcpConnection.ConnectAsync(target, runtime); // must not throw
            try
            {
                JobTcpListener.Bind(IoTestSupport.Loopback, runtime).Dispose();
            }
            catch (Exception e)
            {
                bindError = e;
            }
        }

        SocketException refused = Assert.Throws<SocketException>(() => connecting.Wait());
        Assert.Equal(SocketError.TooManyOpenSockets, refused.SocketErrorCode);
        Assert.Equal(SocketError.TooManyOpenSockets, Assert.IsType<SocketException>(bindError).SocketErrorCode);

        // Descriptors are back: the runtime's sockets work, on its driver.
        using JobTcpConnection client = JobTcpConnection.ConnectAsync(target, runtime).Wait();
        using Socket accepted = bclListener.Accept();
        Assert.NotNull(runtime.IoDriverOrNull);
    }

    /// <summary>
    /// Lowers the soft descriptor limit to the descriptors open now, and fills any hole below it, so
    /// that the next descriptor the process asks for is refused (EMFILE). Disposing restores the
    /// limit and closes the fillers; use it for as short a stretch as possible (this collection runs
    /// alone, but the runtime's own threads share the process).
    /// </summary>
    private static DescriptorsExhausted ExhaustDescriptors()
    {
        Assert.Equal(0, GetRLimit(RlimitNoFile, out RLimit saved));
        var exhausted = new DescriptorsExhausted(saved);
        ulong highest = 0;
        foreach (string entry in Directory.GetFiles("/proc/self/fd"))
        {
            highest = Math.Max(highest, ulong.Parse(Path.GetFileName(entry)));
        }

        var limited = new RLimit { Current = highest + 1, Maximum = saved.Maximum };
        Assert.Equal(0, SetRLimit(RlimitNoFile, ref limited));
        try
        {
            while (true)
            {
                exhausted.Fillers.Add(new FileStream("/dev/null", FileMode.Open, FileAccess.Read));
            }
        }
        catch (IOException)
        {
            // EMFILE: exhausted, as wanted
        }
        catch
        {
            exhausted.Dispose();
            throw;
        }

        return exhausted;
    }

    private sealed class DescriptorsExhausted(RLimit saved) : IDisposable
    {
        private RLimit _saved = saved;

        public System.Collections.Generic.List<FileStream> Fillers { get; } = [];

        public void Dispose()
        {
            SetRLimit(RlimitNoFile, ref _saved);
            foreach (FileStream filler in Fillers)
            {
                filler.Dispose();
            }
        }
    }

    private const int RlimitNoFile = 7;

    [StructLayout(LayoutKind.Sequential)]
    private struct RLimit
    {
        public ulong Current;
        public ulong Maximum;
    }

    [DllImport("libc", EntryPoint = "getrlimit")]
    private static extern int GetRLimit(int resource, out RLimit limit);

    [DllImport("libc", EntryPoint = "setrlimit")]
    private static extern int SetRLimit(int resource, ref RLimit limit);
}
