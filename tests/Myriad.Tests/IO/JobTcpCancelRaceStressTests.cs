using System;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Myriad.IO;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.IO;

/// <summary>
/// Cancellation racing the driver's retries of a parked operation on real sockets. While the peer
/// keeps the socket busy, the poller keeps taking the operation out of its slot to retry it; a
/// cancellation that comes during such a retry must still end the operation once the peer goes
/// quiet, instead of leaving it parked until the connection is disposed.
/// </summary>
/// <remarks>
/// A write hits the race often (the poller retries it for as long as the peer drains). A read is
/// retried without completing only on stale readiness, for the length of one <c>recv</c> that would
/// block, a window real sockets hardly ever hit (100,000 rounds of the read test did not, before
/// the fix): <see cref="IoCancellationProtocolTests"/> holds that window open for both directions.
/// </remarks>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public sealed class JobTcpCancelRaceStressTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(2);

    [Fact]
    public void WriteAsync_CanceledWhileThePeerDrains_ThrowsCanceledNeverHangs()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        const int rounds = 300;
        byte[] payload = new byte[64 << 20];
        TestHelpers.OnThread(() =>
        {
            using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
            Assert.True(listener.UsesIoDriver);
            Task<JobTcpConnection> accepting = listener.AcceptAsync().AsTask();
            using var peer = new Socket(SocketType.Stream, ProtocolType.Tcp);
            peer.Connect(listener.LocalEndPoint);
            using JobTcpConnection server = accepting.Result;
            using var drain = new Drain(peer);

            for (int round = 0; round < rounds; round++)
            {
                using var cts = new CancellationTokenSource();
                drain.Start();
                Task write = runtime.Spawn((server, payload, cts.Token), static async s => await s.server.WriteAsync(s.payload, s.Token)).AsTask();
                Thread.Sleep(1 + (round % 3));
                cts.Cancel();
                drain.Stop(); // quiet from now on: no event will come to retry the write again

                if (!WaitQuietly(write))
                {
                    Assert.Fail($"Round {round}: the write ignored its cancellation and was still pending {Patience.TotalSeconds} s later.");
                }

                if (!write.IsCompletedSuccessfully)
                {
                    Assert.IsAssignableFrom<OperationCanceledException>(write.Exception?.InnerException ?? new TaskCanceledException(write));
                }
            }
        }, timeout: TimeSpan.FromSeconds(120));
    }

    [Fact]
    public void ReadAsync_CanceledWhileDataTrickles_ThrowsCanceledOrReadsNeverHangs()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        const int rounds = 3000;
        TestHelpers.OnThread(() =>
        {
            using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
            Task<JobTcpConnection> accepting = listener.AcceptAsync().AsTask();
            using var peer = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            peer.Connect(listener.LocalEndPoint);
            using JobTcpConnection server = accepting.Result;
            byte[] chunk = new byte[7];
            var random = new Random(17);

            for (int round = 0; round < rounds; round++)
            {
                using var cts = new CancellationTokenSource();

                // The job reads until cancelled; small chunks sent one by one give it data and
                // events, some of which come after their data was already read (edge-triggered
                // readiness is stale then), so the poller retries a parked read that would block.
                Task<int> reader = runtime.Spawn((server, cts.Token), static async s =>
                {
                    byte[] buffer = new byte[64];
                    int total = 0;
                    while (true)
                    {
                        try
                        {
                            total += await s.server.ReadAsync(buffer, s.Token);
                        }
                        catch (OperationCanceledException)
                        {
                            return total;
                        }
                    }
                }).AsTask();

                int chunks = 1 + random.Next(4);
                for (int i = 0; i < chunks; i++)
                {
                    peer.Send(chunk);
                    Thread.SpinWait(random.Next(0, 400));
                }

                Thread.SpinWait(random.Next(0, 2000));
                cts.Cancel();

                if (!WaitQuietly(reader))
                {
                    Assert.Fail($"Round {round}: the read ignored its cancellation and was still pending {Patience.TotalSeconds} s later.");
                }

                Assert.True(reader.IsCompletedSuccessfully, reader.Exception?.ToString());
            }
        }, timeout: TimeSpan.FromSeconds(120));
    }

    private static bool WaitQuietly(Task task)
    {
        try
        {
            return task.Wait(Patience);
        }
        catch (AggregateException)
        {
            return true;
        }
    }

    /// <summary>A peer that reads (and drops) everything as fast as it can while started.</summary>
    private sealed class Drain : IDisposable
    {
        private readonly Socket _peer;
        private readonly ManualResetEventSlim _go = new();
        private readonly Thread _thread;
        private volatile bool _running;
        private volatile bool _done;

        internal Drain(Socket peer)
        {
            _peer = peer;
            _thread = new Thread(Loop) { IsBackground = true, Name = "drain" };
            _thread.Start();
        }

        internal void Start()
        {
            _running = true;
            _go.Set();
        }

        internal void Stop()
        {
            _go.Reset();
            _running = false;
        }

        public void Dispose()
        {
            _done = true;
            _go.Set();
            _thread.Join(TimeSpan.FromSeconds(10));
        }

        private void Loop()
        {
            byte[] sink = new byte[1 << 16];
            _peer.ReceiveTimeout = 100;
            while (!_done)
            {
                _go.Wait();
                try
                {
                    while (_running && !_done)
                    {
                        _peer.Receive(sink);
                    }
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.TimedOut)
                {
                }
                catch (SocketException)
                {
                    return;
                }
            }
        }
    }
}
