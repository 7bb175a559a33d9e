using System;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// Zero-allocation guarantees, measured with <see cref="GC.GetAllocatedBytesForCurrentThread"/>.
/// Everything measured runs on the measuring thread (a current-thread runtime), so other tests
/// running in parallel cannot disturb the count. Loops are repeated until the JIT's optimized code
/// runs (see <see cref="TestHelpers.SteadyStateAllocations"/> and <see cref="SteadyState"/>); the
/// first runs also warm the pools.
/// </summary>
public sealed class ChanAllocationTests
{
    private const int Iterations = 10_000;

    private static readonly Action<int> s_ignore = static _ => { };

    [Fact]
    public void SendReceive_Synchronous_AllocatesNothing()
    {
        Chan<int> ch = Chan.Bounded<int>(4);
        Assert.Equal(0, TestHelpers.SteadyStateAllocations(Run));

        void Run()
        {
            for (int i = 0; i < Iterations; i++)
            {
                ch.SendAsync(i).GetAwaiter().GetResult();
                ch.TrySend(i);
                ch.ReceiveAsync().GetAwaiter().GetResult();
                ch.ReceiveOkAsync().GetAwaiter().GetResult();
            }
        }
    }

    [Fact]
    public void Select_CaseReady_AllocatesNothing()
    {
        Chan<int> ready = Chan.Bounded<int>(1);
        Chan<int> empty1 = Chan.Unbuffered<int>();
        Chan<string> empty2 = Chan.Unbuffered<string>();
        Chan<long> full = Chan.Bounded<long>(1);
        full.TrySend(0);
        Assert.Equal(0, TestHelpers.SteadyStateAllocations(Run));

        void Run()
        {
            for (int i = 0; i < Iterations; i++)
            {
                ready.TrySend(i);
                int fired = Select.Receive(empty1, s_ignore).Receive(ready, s_ignore).Receive(empty2).Send(full, 1L)
                    .Timeout(TimeSpan.FromSeconds(1)).AsJob().GetAwaiter().GetResult();
                if (fired != 1)
                {
                    throw new InvalidOperationException($"case {fired} fired"); // not Assert.Equal: it allocates
                }
            }
        }
    }

    [Fact]
    public void Select_DefaultCase_AllocatesNothing()
    {
        Chan<int> empty = Chan.Unbuffered<int>();
        Assert.Equal(0, TestHelpers.SteadyStateAllocations(Run));

        void Run()
        {
            for (int i = 0; i < Iterations; i++)
            {
                Select.Receive(empty).Send(empty, i).Default().AsJob().GetAwaiter().GetResult();
            }
        }
    }

    [Fact]
    public void PingPong_UnbufferedBetweenTwoJobs_AllocatesNothingPerRoundTrip()
    {
        long allocated = PingPongAllocations(
            static async (ping, pong) =>
            {
                while (true)
                {
                    var (v, ok) = await ping.ReceiveOkAsync();
                    if (!ok)
                    {
                        return;
                    }

                    await pong.SendAsync(v + 1);
                }
            },
            static async (ping, pong, n) =>
            {
                for (int i = 0; i < n; i++)
                {
                    await ping.SendAsync(i);
                    if (await pong.ReceiveAsync() != i + 1)
                    {
                        throw new InvalidOperationException("wrong reply"); // not Assert.Equal: it allocates
                    }
                }
            });

        Assert.True(allocated == 0, $"{allocated} bytes for {Iterations} round trips ({(double)allocated / Iterations:F2} B each)");
    }

    [Fact]
    public void PingPong_ThroughTheReaderAndWriterViews_AllocatesNothingPerRoundTrip()
    {
        // Every ReadAsync here waits (the other side has not written yet): the view's waiting read
        // is a pooled box, reused once the awaiting job consumed its outcome.
        long allocated = PingPongAllocations(
            static async (ping, pong) =>
            {
                while (await ping.Reader.WaitToReadAsync())
                {
                    int v = await ping.Reader.ReadAsync();
                    await pong.Writer.WriteAsync(v + 1);
                }
            },
            static async (ping, pong, n) =>
            {
                for (int i = 0; i < n; i++)
                {
                    await ping.Writer.WriteAsync(i);
                    if (await pong.Reader.ReadAsync() != i + 1)
                    {
                        throw new InvalidOperationException("wrong reply"); // not Assert.Equal: it allocates
                    }
                }
            });

        Assert.True(allocated == 0, $"{allocated} bytes for {Iterations} round trips ({(double)allocated / Iterations:F2} B each)");
    }

    /// <summary>
    /// Bytes per <see cref="Iterations"/> steady-state round trips of <paramref name="roundTrips"/>
    /// against a spawned <paramref name="ponger"/> over two unbuffered channels, on a current-thread
    /// runtime; closing the ping channel ends the ponger.
    /// </summary>
    private static long PingPongAllocations(Func<Chan<int>, Chan<int>, Job> ponger, Func<Chan<int>, Chan<int>, int, Job> roundTrips)
    {
        using var runtime = new CurrentThreadRuntime();
        Chan<int> ping = Chan.Unbuffered<int>();
        Chan<int> pong = Chan.Unbuffered<int>();
        return Bounded.Run(runtime, async () =>
        {
            Job answering = runtime.Spawn((ping, pong, ponger), static s => s.ponger(s.ping, s.pong));
            long bytes = await SteadyState.AllocatedBytesAsync(n => roundTrips(ping, pong, n), Iterations);
            ping.Close();
            await answering;
            return bytes;
        });
    }

    [Fact]
    public void PingPong_WaitingSelects_AllocateNothingPerRoundTrip()
    {
        // Both sides wait in selects (no timeout, no token): pooled operations and cases.
        using var runtime = new CurrentThreadRuntime();
        Chan<int> ping = Chan.Unbuffered<int>();
        Chan<int> pong = Chan.Unbuffered<int>();
        Chan<int> never = Chan.Unbuffered<int>();
        Chan<int> close = Chan.Unbuffered<int>();
        long allocated = Bounded.Run(runtime, async () =>
        {
            Job ponger = runtime.Spawn((ping, pong, close), static async s =>
            {
                while (await Select.Receive(s.ping).ReceiveOk(s.close) == 0)
                {
                    await Select.Send(s.pong, 1).Receive(s.close);
                }
            });
            long bytes = await SteadyState.AllocatedBytesAsync(n => RoundTrips(ping, pong, never, n), Iterations);
            close.Close();
            await ponger;
            return bytes;
        });

        Assert.True(allocated == 0, $"{allocated} bytes for {Iterations} round trips ({(double)allocated / Iterations:F2} B each)");

        static async Job RoundTrips(Chan<int> ping, Chan<int> pong, Chan<int> never, int n)
        {
            for (int i = 0; i < n; i++)
            {
                await Select.Send(ping, i).Receive(never);
                await Select.Receive(pong).Receive(never);
            }
        }
    }
}
