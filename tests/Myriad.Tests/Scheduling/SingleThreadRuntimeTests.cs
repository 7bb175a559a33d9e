using System;
using Myriad.Channels;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

public class SingleThreadRuntimeTests
{
    private static List<int> RecordOrder(SingleThreadRuntime runtime)
    {
        var order = new List<int>();
        for (int i = 0; i < 20; i++)
        {
            runtime.SpawnDetached((order, i), static s => s.order.Add(s.i));
        }

        runtime.RunUntilIdle();
        return order;
    }

    [Fact]
    public void CurrentThreadRuntime_RunsJobsInFifoOrderOnTheDrivingThread()
    {
        using var runtime = new CurrentThreadRuntime();
        Assert.Equal(System.Linq.Enumerable.Range(0, 20), RecordOrder(runtime));
        int thread = runtime.Run(static async () =>
        {
            await Task.Yield();
            return Environment.CurrentManagedThreadId;
        });
        Assert.Equal(Environment.CurrentManagedThreadId, thread);
    }

    [Fact]
    public void JobYield_OnACurrentThreadRuntime_LetsTheJobsQueuedBehindRunFirst()
    {
        using var runtime = new CurrentThreadRuntime();
        var order = new List<string>();
        runtime.SpawnDetached(order, static async o =>
        {
            o.Add("a1");
            await Job.Yield();
            o.Add("a2");
        });
        runtime.SpawnDetached(order, static o => o.Add("b"));
        runtime.RunUntilIdle();
        Assert.Equal(["a1", "b", "a2"], order);
    }

    [Fact]
    public void DeterministicRuntime_SameSeed_SameSchedule()
    {
        using var a = new DeterministicRuntime(seed: 42);
        using var b = new DeterministicRuntime(seed: 42);
        Assert.Equal(RecordOrder(a), RecordOrder(b));
    }

    [Fact]
    public void DeterministicRuntime_DifferentSeeds_ExploreDifferentSchedules()
    {
        var schedules = new HashSet<string>();
        for (int seed = 0; seed < 10; seed++)
        {
            using var runtime = new DeterministicRuntime(seed);
            schedules.Add(string.Join(",", RecordOrder(runtime)));
        }

        Assert.True(schedules.Count > 5, $"only {schedules.Count} distinct schedules from 10 seeds");
    }

    [Fact]
    public void Dispose_CancelsJobsThatNeverStarted()
    {
        var runtime = new CurrentThreadRuntime();
        Job<int> queued = runtime.Spawn(1, static x => Job.FromResult(x));
        Assert.Equal(1, runtime.PendingCount);
        runtime.Dispose();
        Assert.Throws<OperationCanceledException>(() => queued.Wait());
    }

    [Fact]
    public void Drive_FromTwoThreadsAtOnce_SecondThrowsInvalidOperation()
    {
        using var runtime = new CurrentThreadRuntime();
        using var inside = new ManualResetEventSlim();
        var gate = new Promise<int>();
        runtime.SpawnDetached(inside, static e => e.Set());
        TestThread driver = TestThread.Start(() => runtime.Run(gate, static async g =>
        {
            return await g.Job;
        }), "driver");
        Assert.True(inside.Wait(TimeSpan.FromSeconds(10)));
        var error = Assert.Throws<InvalidOperationException>(() => runtime.RunUntilIdle());
        Assert.Contains("already driving", error.Message);
        gate.SetResult(1);
        Assert.True(driver.Join(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public void RunUntilIdle_InsideOneOfItsOwnJobs_ThrowsNamingRunUntilIdle()
    {
        using var runtime = new CurrentThreadRuntime();
        string message = runtime.Run(runtime, static rt =>
        {
            try
            {
                rt.RunUntilIdle();
                return Job.FromResult("no exception");
            }
            catch (InvalidOperationException error)
            {
                return Job.FromResult(error.Message);
            }
        });
        Assert.Contains("RunUntilIdle", message);
        Assert.DoesNotContain("wait for one of its jobs", message);
    }

    [Fact]
    public void Run_InALoop_LeavesNoStaleEntriesInTheQueue()
    {
        // Run queues the job, then its waiter runs it inline; the entry must not stay behind.
        using var runtime = new CurrentThreadRuntime();
        for (int i = 0; i < 10_000; i++)
        {
            Assert.Equal(i, runtime.Run(i, static x => Job.FromResult(x)));
        }

        Assert.Equal(0, runtime.PendingCount);
    }

    [Fact]
    public void Wait_ForAJobOfARuntimeThisThreadDrivesInAnOuterFrame_ThrowsInsteadOfHanging()
    {
        using var outer = new CurrentThreadRuntime();
        using var inner = new CurrentThreadRuntime();
        var error = Assert.Throws<InvalidOperationException>(() => outer.Run((outer, inner), static s =>
            Job.FromResult(s.inner.Run(s.outer, static o => Job.FromResult(o.Spawn(static () => Job.FromResult(1)).Wait())))));
        Assert.Contains("outer frame", error.Message);
    }

    [Fact]
    public void CurrentThread_ProducerAndConsumerHandingOffInline_OtherQueuedJobsStillGetTurns()
    {
        // Each hand-off resumes the consumer inline and unwinds, so the trampoline's depth limit never
        // stops the pair; without a budget, a job queued behind them ran only once all items had passed.
        const int Items = 20_000;
        using var runtime = new CurrentThreadRuntime();
        var channel = Chan.Bounded<int>(8);
        var progress = new int[2]; // items received; items received when the other job ran (-1: not yet)
        progress[1] = -1;
        runtime.Run((runtime, channel, progress), static async s =>
        {
            Job producer = s.runtime.Spawn(s.channel, static async ch =>
            {
                for (int i = 0; i < Items; i++)
                {
                    await ch.SendAsync(i);
                }
            });
            Job other = s.runtime.Spawn(s.progress, static p => { p[1] = p[0]; });
            for (int n = 0; n < Items; n++)
            {
                await s.channel.ReceiveAsync();
                s.progress[0]++;
            }

            await Job.WhenAll(producer, other);
        });

        Assert.InRange(progress[1], 0, Items / 10);
    }

    [Fact]
    public void CurrentThread_SelectOverTwoProducers_PicksBoth()
    {
        using var runtime = new CurrentThreadRuntime();
        int[] picks = runtime.Run(runtime, static async rt =>
        {
            var a = Chan.Bounded<int>(8);
            var b = Chan.Bounded<int>(8);
            Job pa = rt.Spawn(a, static async ch => { for (int i = 0; i < 5_000; i++) { await ch.SendAsync(i); } });
            Job pb = rt.Spawn(b, static async ch => { for (int i = 0; i < 5_000; i++) { await ch.SendAsync(i); } });
            var picks = new int[2];
            for (int n = 0; n < 5_000; n++) // half of all items: both producers still have plenty to send
            {
                picks[await Select.Receive(a).Receive(b)]++;
            }

            for (int n = 0; n < 5_000; n++)
            {
                await Select.Receive(a).Receive(b);
            }

            await Job.WhenAll(pa, pb);
            return picks;
        });

        Assert.True(picks[0] > 1_000 && picks[1] > 1_000, $"picks {picks[0]} and {picks[1]}");
    }
}
