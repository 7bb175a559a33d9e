using System.Runtime.CompilerServices;
using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// Millions of spawns and joins across workers, repeated: a lost wake-up shows as a hang (the
/// helpers fail after a timeout), a double execution as a wrong count.
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public class MultiThreadRuntimeStressTests
{
    [Theory]
    [InlineData(2)]
    [InlineData(4)]
    public void FanOutFanIn_FromInsideTheRuntime_EveryJobRunsOnce(int workers)
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = workers, LocalQueueCapacity = 16 });
        for (int round = 0; round < 5; round++)
        {
            var counts = new int[200_000];
            long sum = TestHelpers.OnThread(() => runtime.Run((runtime, counts), static async s =>
            {
                long total = 0;
                var handles = new Job<int>[1000];
                for (int batch = 0; batch < s.counts.Length / handles.Length; batch++)
                {
                    for (int i = 0; i < handles.Length; i++)
                    {
                        int id = (batch * handles.Length) + i;
                        handles[i] = s.runtime.Spawn((s.counts, id), static async x =>
                        {
                            if ((x.id & 7) == 0)
                            {
                                await Task.Yield();
                            }

                            Interlocked.Increment(ref x.counts[x.id]);
                            return 1;
                        });
                    }

                    foreach (Job<int> handle in handles)
                    {
                        total += await handle;
                    }
                }

                return total;
            }));
            Assert.Equal(counts.Length, sum);
            Assert.All(counts, c => Assert.Equal(1, c));
        }
    }

    [Fact]
    public void SpawnAndWait_FromManyPlainThreads_NoLostWakeups()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        const int threads = 4;
        const int perThread = 100_000;
        var totals = new long[threads];
        var workers = new TestThread[threads];
        for (int t = 0; t < threads; t++)
        {
            int index = t;
            workers[t] = TestThread.Start(() =>
            {
                long sum = 0;
                for (int i = 0; i < perThread; i++)
                {
                    sum += runtime.Spawn(i, static x => Job.FromResult((long)x)).Wait();
                    if (i % 1000 == 0)
                    {
                        // Mix in handles that a worker must run (the waiter blocks instead of running it).
                        sum += runtime.Spawn(0L, static async x =>
                        {
                            await Task.Yield();
                            return x;
                        }).Wait();
                    }
                }

                totals[index] = sum;
            }, $"spawn-and-wait {t}");
        }

        foreach (TestThread worker in workers)
        {
            Assert.True(worker.Join(TimeSpan.FromSeconds(120)), "a spawn-and-wait thread hung");
        }

        Assert.All(totals, total => Assert.Equal((long)perThread * (perThread - 1) / 2, total));
    }

    [Fact]
    public void DetachedSpawnsFromPlainThreads_AllRunBeforeDisposeReturns()
    {
        for (int round = 0; round < 20; round++)
        {
            var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
            var counter = new StrongBox<int>();
            Parallel.For(0, 4, _ =>
            {
                for (int i = 0; i < 5000; i++)
                {
                    runtime.SpawnDetached(counter, static c => Interlocked.Increment(ref c.Value));
                }
            });
            TestHelpers.OnThread(runtime.Dispose);
            Assert.Equal(20_000, counter.Value);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void SpawnsFromPlainThreads_RacingDispose_EachIsRefusedOrRuns(bool detached)
    {
        // A spawn either throws ObjectDisposedException or is accepted; an accepted one runs
        // before Dispose returns. The race is at its sharpest with one worker, which can leave its
        // loop while a spawner is between its disposal check and its enqueue.
        for (int round = 0; round < 300; round++)
        {
            var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
            var ran = new StrongBox<int>();
            var accepted = new int[2];
            var canceled = new int[2];
            using var start = new Barrier(3);
            var spawners = new TestThread[2];
            for (int t = 0; t < spawners.Length; t++)
            {
                int index = t;
                spawners[t] = TestThread.Start(() =>
                {
                    start.SignalAndWait();
                    var handles = new System.Collections.Generic.List<Job>();
                    try
                    {
                        while (true)
                        {
                            if (detached)
                            {
                                runtime.SpawnDetached(ran, static r => Interlocked.Increment(ref r.Value));
                            }
                            else
                            {
                                handles.Add(runtime.Spawn(ran, static r => { Interlocked.Increment(ref r.Value); }));
                            }

                            accepted[index]++;
                        }
                    }
                    catch (ObjectDisposedException)
                    {
                    }

                    foreach (Job handle in handles)
                    {
                        try
                        {
                            handle.Wait();
                        }
                        catch (OperationCanceledException)
                        {
                            canceled[index]++;
                        }
                    }
                }, $"spawner {t}");
            }

            start.SignalAndWait();
            Thread.SpinWait(round * 37 % 2000);
            TestHelpers.OnThread(runtime.Dispose);
            foreach (TestThread spawner in spawners)
            {
                Assert.True(spawner.Join(TestHelpers.DefaultTimeout), "a spawner hung");
            }

            Assert.Equal(0, canceled[0] + canceled[1]);
            Assert.Equal(accepted[0] + accepted[1], Volatile.Read(ref ran.Value));
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void TimerWakeUps_RacingASpawnBacklogAndDisposal_EveryDetachedJobEnds(bool disposeEarly)
    {
        // Wake-ups arrive in the woken queue while workers take spawned jobs from the local and
        // global queues; disposing midway sends late wake-ups to the abandon path. Either way each
        // job must end exactly once: run to completion, or end canceled.
        const int Sleepers = 20_000;
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var ran = new StrongBox<int>();
        long before = runtime.CompletedCount;
        runtime.Run((runtime, ran), static s =>
        {
            for (int i = 0; i < Sleepers; i++)
            {
                s.runtime.SpawnDetached((s.ran, i), static async t =>
                {
                    await Job.Delay(t.i % 4);
                    Interlocked.Increment(ref t.ran.Value);
                });
            }

            return Job.CompletedJob;
        });
        if (disposeEarly)
        {
            runtime.Dispose();
        }

        // CompletedCount also counts the job Run spawned: waiting for Sleepers completions only
        // could stop one sleeper short of the end.
        Assert.True(
            SpinWait.SpinUntil(() => runtime.CompletedCount - before >= Sleepers + 1, TimeSpan.FromSeconds(60)),
            $"{runtime.CompletedCount - before - 1} of {Sleepers} detached jobs ended");
        Assert.True(Volatile.Read(ref ran.Value) <= Sleepers);
        if (!disposeEarly)
        {
            Assert.Equal(Sleepers, Volatile.Read(ref ran.Value));
        }

        runtime.Dispose();
    }

    [Fact]
    public void IdleWorkers_WakeForWorkAfterParking_Repeatedly()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, LazyWakeDelay = TimeSpan.Zero });
        for (int i = 0; i < 300; i++)
        {
            if (i % 50 == 0)
            {
                Thread.Sleep(5); // let every worker park
            }

            Task<int> task = runtime.Spawn(i, static async x =>
            {
                await Task.Yield();
                return x;
            }).AsTask();
            Assert.True(task.Wait(TimeSpan.FromSeconds(10)), $"iteration {i}: a parked worker was never woken");
            Assert.Equal(i, task.Result);
        }
    }

    private sealed class FanOut
    {
        public MultiThreadRuntime Runtime = null!;
        public int Children;
        public int Ran;
        public int RanInTime;
        public volatile int Outcome; // 0 running, 1 every child ran, 2 timed out
    }

    [Fact]
    public void TwoSpawnsFromABusyWorker_WakeTheParkedSibling_BeforeTheWatchdogWould()
    {
        // The push that leaves two items in a worker's queue notifies a parked sibling at once
        // (MultiThreadRuntime.Schedule; the pushes after it rely on that notify, and a lone item
        // waits for the watchdog). The spawner never returns to its loop, spares are off, and the
        // watchdog waits its longest delay (1 s): a lost wake-up shows as children that only run
        // once the watchdog looks. Two children, because with more the sibling may drain the
        // queue between two pushes and leave the next one alone, which waits for the watchdog by
        // design.
        const int children = 2;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions
        {
            WorkerCount = 2,
            LazyWakeDelay = TimeSpan.FromSeconds(1),
            MaxSpareThreads = 0,
        });
        for (int round = 0; round < 50; round++)
        {
            Thread.Sleep(5); // let the idle worker park
            var state = new FanOut { Runtime = runtime, Children = children };
            runtime.SpawnDetached(state, static s =>
            {
                for (int i = 0; i < s.Children; i++)
                {
                    s.Runtime.SpawnDetached(s, static x => Interlocked.Increment(ref x.Ran));
                }

                // Busy on this worker: well under the watchdog's delay, only the sibling can run them.
                bool all = SpinWait.SpinUntil(() => Volatile.Read(ref s.Ran) == s.Children, TimeSpan.FromMilliseconds(900));
                s.RanInTime = Volatile.Read(ref s.Ran);
                s.Outcome = all ? 1 : 2;
            });
            Assert.True(SpinWait.SpinUntil(() => state.Outcome != 0, TimeSpan.FromSeconds(30)), $"round {round}: the spawning job never finished");
            Assert.True(state.Outcome == 1, $"round {round}: {state.RanInTime} of {children} children ran in 900 ms while their spawner stayed busy; the parked sibling was not woken");
        }
    }

    private sealed class Relay
    {
        public MultiThreadRuntime Source = null!;
        public CurrentThreadRuntime Other = null!;
        public int[] Runs = null!;
        public volatile int WrongRuntime;
        public readonly System.Collections.Concurrent.BlockingCollection<(Job Job, int Id)> Handles = new(boundedCapacity: 64);
    }

    [Fact]
    public void StaleEntries_WaitersRunJobsInlineWhileBoxesMoveBetweenRuntimes_EachRunsOnceOnItsOwnRuntime()
    {
        // Jobs spawned by a worker sit in its local ring, where a plain thread that waits for one can
        // claim it but not take its entry back: the entry goes stale and the box returns to the
        // waiter's pool, to be reused at once by that thread's next spawn on a current-thread
        // runtime, where it stays queued until the thread drives: meanwhile the worker pops the
        // stale entry. Every body must run exactly once, and on the runtime it was spawned on.
        // (Without the claim's runtime number, the stale entries started hundreds of the
        // current-thread runtime's jobs on the source's workers.)
        const int jobs = 20_000;
        using var source = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, ThreadNamePrefix = "source" });
        using var other = new CurrentThreadRuntime();
        var relay = new Relay { Source = source, Other = other, Runs = new int[2 * jobs] };
        Job producer = source.Spawn(relay, static r =>
        {
            for (int id = 0; id < jobs; id++)
            {
                Job job = r.Source.Spawn((r, id), static s =>
                {
                    Interlocked.Increment(ref s.r.Runs[s.id]);
                    if (!s.r.Source.IsRuntimeThread)
                    {
                        s.r.WrongRuntime++;
                    }
                });
                r.Handles.Add((job, id));
            }

            r.Handles.CompleteAdding();
            return Job.CompletedJob;
        });

        TestHelpers.OnThread(() =>
        {
            var queued = new System.Collections.Generic.List<Job>();
            foreach ((Job job, int id) in relay.Handles.GetConsumingEnumerable())
            {
                job.Wait();
                queued.Add(other.Spawn((relay, id: jobs + id), static s =>
                {
                    Interlocked.Increment(ref s.relay.Runs[s.id]);
                    if (!s.relay.Other.IsRuntimeThread)
                    {
                        s.relay.WrongRuntime++;
                    }
                }));
                if (queued.Count == 16)
                {
                    other.RunUntilIdle();
                    queued.ForEach(static j => j.Wait());
                    queued.Clear();
                }
            }

            other.RunUntilIdle();
            queued.ForEach(static j => j.Wait());
        }, timeout: TimeSpan.FromMinutes(2));
        producer.Wait();
        Assert.Equal(0, relay.WrongRuntime);
        Assert.All(relay.Runs, runs => Assert.Equal(1, runs));
    }
}
