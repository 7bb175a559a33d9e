using System;
using System.Threading;
using Myriad.Coordination;
using Myriad.Internal;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Coordination;

/// <summary>
/// The system-clock timer queue under concurrent schedules, cancels and firings: every timer either
/// fires exactly once or is canceled (never both, never lost), and the wheels end empty.
/// </summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class TimerQueueStressTests
{
    [Fact]
    public void ScheduleCancelFire_FromFourThreads_EveryTimerFiresOnceOrIsCanceled()
    {
        const int Threads = 4;
        const int PerThread = 20_000;
        var queue = new SystemTimerQueue(shards: 3); // a queue of its own: other tests' timers do not count
        var works = new CountingWork[Threads][];
        var canceled = new bool[Threads][];
        TestHelpers.OnThread(() =>
        {
            var threads = new Thread[Threads];
            for (int t = 0; t < Threads; t++)
            {
                int id = t;
                works[id] = new CountingWork[PerThread];
                canceled[id] = new bool[PerThread];
                threads[id] = new Thread(() =>
                {
                    var random = new Random(id);
                    for (int i = 0; i < PerThread; i++)
                    {
                        var work = new CountingWork();
                        works[id][i] = work;
                        queue.Schedule(work.Entry, TimeSpan.FromMilliseconds(random.Next(0, 6)), null);
                        int action = random.Next(4);
                        if (action == 0)
                        {
                            canceled[id][i] = TimerQueue.Cancel(work.Entry);
                        }
                        else if (action == 1 && i > 0)
                        {
                            // Cancel an older timer, which may be firing right now on the driver.
                            int older = random.Next(i);
                            if (!canceled[id][older])
                            {
                                canceled[id][older] = TimerQueue.Cancel(works[id][older].Entry);
                            }
                        }
                    }
                });
                threads[id].Start();
            }

            foreach (Thread thread in threads)
            {
                thread.Join();
            }

            // Every timer not canceled fires within its 5 ms plus the driver's and the thread
            // pool's latency; the bound only keeps a lost timer from hanging the run.
            SpinWait.SpinUntil(() => queue.Count == 0 && AllSettled(works, canceled), TimeSpan.FromSeconds(20));
        });

        Assert.Equal(0, queue.Count);
        for (int t = 0; t < Threads; t++)
        {
            for (int i = 0; i < PerThread; i++)
            {
                int fired = works[t][i].Fired;
                Assert.True(canceled[t][i] ? fired == 0 : fired == 1, $"timer {t}/{i}: canceled={canceled[t][i]}, fired {fired} times");
                Assert.Null(works[t][i].Entry.Shard);
            }
        }
    }

    [Fact]
    public void Delay_ManyJobsCancelingAtRandom_AllEndWithoutHanging()
    {
        const int Jobs = 20_000;
        int completed = 0;
        int canceled = 0;
        SpawnAllOnTwoWorkers(Jobs, async seed =>
        {
            var random = new Random(seed);
            using var cts = new CancellationTokenSource();
            Job delay = Job.Delay(TimeSpan.FromMilliseconds(random.Next(1, 20)), random.Next(2) == 0 ? cts.Token : default);
            if (random.Next(3) == 0)
            {
                await Job.Delay(random.Next(0, 10));
                cts.Cancel();
            }

            try
            {
                await delay;
                Interlocked.Increment(ref completed);
            }
            catch (OperationCanceledException)
            {
                Interlocked.Increment(ref canceled);
            }
        });

        Assert.Equal(Jobs, completed + canceled);
    }

    [Fact]
    public void Delay_CancelRacingTheTimerAtItsDueTime_EndsInTimeOrCanceledWithThatToken()
    {
        // The timer's firing and the token's cancel race for the cell (its claim); the loser must
        // change nothing. In particular the timer, which clears the runtime it parked in the cell
        // when it copies it out, must never wipe out the cancel's error, and the cancel must never
        // leave a fired cell scheduled.
        const int Rounds = 4_000;
        int fired = 0;
        int canceled = 0;
        var wrong = new System.Collections.Concurrent.ConcurrentQueue<string>();
        SpawnAllOnTwoWorkers(Rounds, async seed =>
        {
            using var cts = new CancellationTokenSource();
            Job delay = Job.Delay(TimeSpan.FromMilliseconds(1 + (seed % 3)), cts.Token);
            var spin = new SpinWait();
            for (int k = seed % 40; k > 0; k--)
            {
                spin.SpinOnce(sleep1Threshold: -1);
            }

            if (seed % 2 == 0)
            {
                Thread.Sleep(1 + (seed % 3)); // near the due time
            }

            cts.Cancel();
            try
            {
                await delay;
                Interlocked.Increment(ref fired);
            }
            catch (OperationCanceledException e) when (e.CancellationToken == cts.Token)
            {
                Interlocked.Increment(ref canceled);
            }
            catch (Exception e)
            {
                wrong.Enqueue($"{e.GetType().Name}: {e.Message}");
            }
        });

        Assert.Empty(wrong);
        Assert.Equal(Rounds, fired + canceled);
        Assert.True(canceled > 0, "no cancel won a race");
    }

    /// <summary>Spawns <paramref name="count"/> jobs (each given its index) on a fresh two-worker runtime and waits for all of them.</summary>
    private static void SpawnAllOnTwoWorkers(int count, Func<int, Job> body)
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Bounded.Run(runtime, async () =>
        {
            var jobs = new Job[count];
            for (int i = 0; i < count; i++)
            {
                jobs[i] = runtime.Spawn((i, body), static s => s.body(s.i));
            }

            await Job.WhenAll(jobs);
        });
    }

    private static bool AllSettled(CountingWork[][] works, bool[][] canceled)
    {
        for (int t = 0; t < works.Length; t++)
        {
            for (int i = 0; i < works[t].Length; i++)
            {
                if (!canceled[t][i] && Volatile.Read(ref works[t][i].Fired) == 0)
                {
                    return false;
                }
            }
        }

        return true;
    }

    [Fact]
    public void Delay_FakeClockAdvancedWhileTheDelayArmsItsTimer_FiresAtThatAdvance()
    {
        // The provider's timer is armed with a due time counted from the clock's now when Change
        // runs; an advance on another thread between the queue's read of the clock and Change once
        // left the timer due a whole advance later, and the delay pending for good.
        for (int round = 0; round < 300; round++)
        {
            var fake = new Microsoft.Extensions.Time.Testing.FakeTimeProvider();
            TimerQueue queue = TimerQueue.For(fake);
            Job delay = default;
            var scheduling = new Thread(() => delay = Job.Delay(TimeSpan.FromMinutes(1), fake));
            scheduling.Start();
            Assert.True(SpinWait.SpinUntil(() => queue.Count == 1, TimeSpan.FromSeconds(10)), "the delay never reached the queue");
            fake.Advance(TimeSpan.FromMinutes(1)); // races the arming of the provider's timer
            scheduling.Join();
            Assert.True(SpinWait.SpinUntil(() => delay.IsCompleted, TimeSpan.FromSeconds(10)), $"round {round}: the delay did not fire at the advance that reached it");
        }
    }

    private sealed class CountingWork : WorkItem
    {
        internal readonly TimerEntry Entry;
        internal int Fired;

        internal CountingWork() => Entry = new TimerEntry(this);

        internal override void Execute(PerThread state) => Interlocked.Increment(ref Fired);
    }
}
