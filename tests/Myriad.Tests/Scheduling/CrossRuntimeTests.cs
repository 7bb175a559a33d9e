using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>A job runs on its own runtime, whichever runtime's thread waits for it or held a stale entry for its box.</summary>
public class CrossRuntimeTests
{
    [Fact]
    public void Wait_OnCurrentThreadRuntimeJobFromAnotherRuntimesWorker_RunsItAsThatRuntime()
    {
        using var a = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var b = new CurrentThreadRuntime();
        (bool onA, bool onB) seen = a.Run((a, b), static s =>
        {
            Job<(bool, bool)> job = s.b.Spawn(s, static s => Job.FromResult((s.a.IsRuntimeThread, s.b.IsRuntimeThread)));
            return Job.FromResult(job.Wait());
        });
        Assert.False(seen.onA);
        Assert.True(seen.onB);
    }

    private sealed class Handoff
    {
        public MultiThreadRuntime Runtime = null!;
        public readonly ManualResetEventSlim Gate = new();
        public readonly TaskCompletionSource<Job> Spawned = new();
        public volatile string? RanOn;
    }

    [Fact]
    public void StaleQueueEntry_OfAJobRunByItsWaiter_DoesNotStartTheBoxsNextSpawnOnAnotherRuntime()
    {
        // B sits in a worker's local queue; a plain thread waits for it and runs it itself (it can
        // only take entries back from the global queue), so B's entry stays behind and B's pooled
        // box goes back to this thread's pool. C, spawned next on another runtime, gets that box;
        // the stale entry must not start C on the first runtime's worker.
        using var first = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, ThreadNamePrefix = "first" });
        using var second = new CurrentThreadRuntime();
        var handoff = new Handoff { Runtime = first };
        TestHelpers.OnThread(() =>
        {
            first.SpawnDetached(handoff, static h =>
            {
                h.Spawned.SetResult(h.Runtime.Spawn(h, static h => { }));
                h.Gate.Wait(); // keep the worker busy so that the entry stays queued
            });
            Job b = handoff.Spawned.Task.Result;
            b.Wait();
            Job c = second.Spawn(handoff, static h => h.RanOn = Thread.CurrentThread.Name ?? "unnamed");
            handoff.Gate.Set();
            Thread.Sleep(100); // the worker now pops the stale entry
            c.Wait();
        });
        Assert.NotNull(handoff.RanOn);
        Assert.DoesNotContain("first", handoff.RanOn!);
    }

    [Fact]
    public void Wait_OnCurrentThreadRuntimeJobFromAWorker_WhileAnotherThreadDrivesIt_WaitsForThatDriver()
    {
        // The worker may not drive (somebody does): it waits, and the driver runs the job.
        using var pool = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        int result = TestHelpers.OnThread(() =>
        {
            using var single = new CurrentThreadRuntime();
            return single.Run(async () =>
            {
                Job<int> job = single.Spawn(static async () =>
                {
                    await Job.Delay(50);
                    return 1;
                });
                await Task.Yield(); // the job starts and suspends on its delay
                return await pool.Spawn(job, static j => Job.FromResult(j.Wait()));
            });
        });
        Assert.Equal(1, result);
    }

    [Fact]
    public void Dispose_FromAWorkerDrivingACurrentThreadRuntime_DoesNotJoinItself()
    {
        var pool = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        using var single = new CurrentThreadRuntime();
        Job<int> disposer = single.Spawn(pool, static p =>
        {
            p.Dispose(); // on the pool's worker, in the single runtime's context
            return Job.FromResult(1);
        });
        Job<int> outer = pool.Spawn(disposer, static async j =>
        {
            await Task.Delay(1); // resumed on the worker
            return j.Wait();     // the worker drives the single runtime
        });
        Task<int> waited = Task.Run(() => outer.Wait());
        Assert.True(waited.Wait(TimeSpan.FromSeconds(30)), "the worker joined itself");
        Assert.Equal(1, waited.Result);
    }

    [Fact]
    public void Wait_ByTwoWorkersOnOneCurrentThreadRuntime_TheSecondTakesOverWhenTheFirstDriverStops()
    {
        // The first waiter drives until its own (faster) job is done, then stops; the second,
        // which found the runtime driven, must take the drive over for its slower job.
        using var pool = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var single = new CurrentThreadRuntime();
        Job<int> slow = single.Spawn(static async () =>
        {
            await Task.Delay(600);
            return 1;
        });
        Job<int> fast = single.Spawn(static async () =>
        {
            await Task.Delay(200);
            return 2;
        });
        Job<int> first = pool.Spawn(fast, static j => Job.FromResult(j.Wait()));
        Thread.Sleep(100); // the first waiter's worker now drives
        Job<int> second = pool.Spawn(slow, static j => Job.FromResult(j.Wait()));
        Task<int> firstDone = Task.Run(() => first.Wait());
        Task<int> secondDone = Task.Run(() => second.Wait());
        Assert.True(firstDone.Wait(TimeSpan.FromSeconds(30)), "the first waiter hung");
        Assert.True(secondDone.Wait(TimeSpan.FromSeconds(30)), "the second waiter hung after the first driver stopped");
        Assert.Equal(2, firstDone.Result);
        Assert.Equal(1, secondDone.Result);
    }

    [Fact]
    public void Run_OnAPlainThreadWhileAWorkerHoldsTheDrive_WaitsItsTurnInsteadOfThrowing()
    {
        // A worker waiting for a slow job takes the drive over between the plain thread's two Run
        // calls; the second Run must not fail as "already driving".
        using var pool = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var single = new CurrentThreadRuntime();
        Job<int> slow = single.Spawn(static async () =>
        {
            await Task.Delay(500);
            return 1;
        });
        var waiter = new Job<int>[1];
        single.Run(async () =>
        {
            waiter[0] = pool.Spawn(slow, static j => Job.FromResult(j.Wait()));
            await Task.Delay(50); // the worker finds the runtime driven and keeps trying
            return 0;
        });
        Thread.Sleep(20); // the worker now drives, waiting for the slow job
        Assert.Equal(2, single.Run(static () => Job.FromResult(2)));
        Task<int> waited = Task.Run(() => waiter[0].Wait());
        Assert.True(waited.Wait(TimeSpan.FromSeconds(30)), "the worker's wait hung");
        Assert.Equal(1, waited.Result);
    }
}
