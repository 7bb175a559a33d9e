using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// A select's job converted with <c>AsTask()</c> inside a job: the handler runs when the result is
/// consumed, and that happens in a job of the caller's runtime, not in the task's own continuation
/// on whatever thread completed the select (a pool thread, racing a current-thread runtime's jobs
/// and outside a seeded runtime's schedule).
/// </summary>
public sealed class SelectAsTaskTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(30);

    [Fact]
    public void AsTask_SelectCompletedByAPlainThread_HandlerRunsOnTheCurrentThreadRuntimesThread()
    {
        (int driver, int handler, bool overlapped) = TestHelpers.OnThread(
            () =>
            {
                using var runtime = new CurrentThreadRuntime();
                var chan = Chan.Unbounded<int>();
                var probe = new HandlerProbe();
                TestThread sender = TestThread.Start(
                    () =>
                    {
                        Thread.Sleep(50);
                        Assert.True(chan.TrySend(1));
                    },
                    "sender");

                runtime.Run((chan, probe), static async s =>
                {
                    // A second job of the runtime, which must never run while the handler does.
                    Job ticker = JobRuntime.Current!.Spawn(s.probe, static async p =>
                    {
                        while (!Volatile.Read(ref p.Done))
                        {
                            if (Volatile.Read(ref p.InHandler))
                            {
                                p.Overlapped = true;
                            }

                            await Job.Yield();
                        }
                    });

                    await Select.Receive(s.chan, s.probe, static (p, _) =>
                    {
                        p.HandlerThread = Environment.CurrentManagedThreadId;
                        Volatile.Write(ref p.InHandler, true);
                        Thread.Sleep(30);
                        Volatile.Write(ref p.InHandler, false);
                    }).AsJob().AsTask();
                    Volatile.Write(ref s.probe.Done, true);
                    await ticker;
                    return 0;
                });
                Assert.True(sender.Join(Limit));
                return (Environment.CurrentManagedThreadId, probe.HandlerThread, probe.Overlapped);
            },
            timeout: Limit);

        Assert.Equal(driver, handler);
        Assert.False(overlapped, "another job of the runtime ran while the handler ran");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void AsTask_SelectsOnADeterministicRuntime_TheSameSeedReplaysTheSameTrace(bool typed)
    {
        for (int seed = 1; seed <= 6; seed++)
        {
            string first = Trace(seed, typed);
            Assert.Equal(first, Trace(seed, typed));
        }
    }

    /// <summary>Four jobs each take five items through <c>AsTask()</c> of a select; the trace says who got which.</summary>
    private static string Trace(int seed, bool typed)
    {
        using var runtime = new DeterministicRuntime(seed);
        var chan = Chan.Unbounded<int>();
        var trace = new List<string>();
        runtime.Run((chan, trace, typed), static async s =>
        {
            JobRuntime runtime = JobRuntime.Current!;
            var takers = new Job[4];
            for (int i = 0; i < takers.Length; i++)
            {
                takers[i] = runtime.Spawn((s.chan, s.trace, s.typed, i), static async t =>
                {
                    for (int n = 0; n < 5; n++)
                    {
                        int item;
                        if (t.typed)
                        {
                            item = (await Select.Receive(t.chan).AsJob<int>().AsTask()).Value;
                        }
                        else
                        {
                            int got = -1;
                            await Select.Receive(t.chan, v => got = v).AsJob().AsTask();
                            item = got;
                        }

                        t.trace.Add($"{t.i}:{item}");
                    }
                });
            }

            for (int item = 0; item < 20; item++)
            {
                Assert.True(s.chan.TrySend(item));
                await Job.Yield();
            }

            foreach (Job taker in takers)
            {
                await taker;
            }

            return 0;
        });
        Assert.Equal(20, trace.Count);
        return string.Join(",", trace);
    }

    private sealed class HandlerProbe
    {
        public int HandlerThread;
        public bool InHandler;
        public bool Overlapped;
        public bool Done;
    }
}
