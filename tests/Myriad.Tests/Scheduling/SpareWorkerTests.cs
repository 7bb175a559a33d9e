using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// A worker blocked outside Myriad's control (here <c>Task.Result</c> on a task that needs the same
/// runtime) does not deadlock a <see cref="MultiThreadRuntime"/>: after
/// <see cref="RuntimeOptions.SpareThreadDelay"/> a spare thread of the runtime runs the stuck work.
/// </summary>
public class SpareWorkerTests
{
    private static async Task<int> DelayedOnRuntime(JobRuntime runtime)
    {
        await Task.Delay(5);
        return runtime.IsRuntimeThread ? 7 : -1; // the continuation comes back to the runtime's TaskScheduler
    }

    /// <summary>
    /// A detached job (so it runs on a worker, not inline on a waiting thread) that blocks on
    /// <c>Task.Result</c> of a task started on its own runtime's TaskScheduler.
    /// </summary>
    private static Task<int> BlockOnAWorker(MultiThreadRuntime runtime)
    {
        var outcome = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        runtime.SpawnDetached((runtime, outcome), static s =>
        {
            Task<int> task = Task.Factory.StartNew(() => DelayedOnRuntime(s.runtime), CancellationToken.None, TaskCreationOptions.DenyChildAttach, s.runtime.TaskScheduler).Unwrap();
            s.outcome.SetResult(task.Result); // blocks the worker
        });
        return outcome.Task;
    }

    [Fact]
    public void TaskResult_OnATaskOfTheOwnSchedulerWithOneWorker_CompletesAndDisposeReturns()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        int result = TestHelpers.OnThread(() => BlockOnAWorker(runtime).Result);

        Assert.Equal(7, result);
        Assert.True(runtime.SparesStarted >= 1);
        TestHelpers.OnThread(runtime.Dispose); // must not hang
    }

    [Fact]
    public void TaskResult_AfterTheWorkerWaitedForAJob_StillGetsASpareThread()
    {
        // The completion of a job that a worker waited for (Job.Wait inside a job) unparks that
        // worker, and may do so after the worker stopped waiting: a stale permit. Its next park then
        // returned at once, leaving it on the idle stack, and the park after that pushed it again:
        // the runtime counted more parked workers than it has, so the watchdog, which starts a spare
        // only when no worker is parked, never rescued a worker blocked on Task.Result.
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        for (int i = 0; i < 5; i++)
        {
            int waited = TestHelpers.OnThread(() => runtime.Spawn(runtime, static r => Job.FromResult(r.Spawn(static async () =>
            {
                await Job.Delay(TimeSpan.FromMilliseconds(5));
                return 5;
            }).Wait())).AsTask().Result);
            Assert.Equal(5, waited);
        }

        Assert.True(SpinWait.SpinUntil(() => runtime.Stats().ParkedWorkers >= 1, TestHelpers.DefaultTimeout), runtime.Stats().ToString());
        Thread.Sleep(50); // a worker pushed twice would show now
        Assert.True(runtime.Stats().ParkedWorkers <= 1, runtime.Stats().ToString());

        Task<int> blocked = BlockOnAWorker(runtime);
        Assert.True(blocked.Wait(TestHelpers.DefaultTimeout), "the blocked worker was never rescued: " + runtime.Stats());
        Assert.Equal(7, blocked.Result);
        TestHelpers.OnThread(runtime.Dispose);
    }

    [Fact]
    public void Dispose_WhileTheOnlyWorkerIsBlockedOnItsOwnTask_DrainsAndReturns()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task<int> job = BlockOnAWorker(runtime);
        Thread.Sleep(2);
        TestHelpers.OnThread(runtime.Dispose);
        Assert.True(job.Wait(TestHelpers.DefaultTimeout));
        Assert.Equal(7, job.Result);
    }

    [Fact]
    public void SpareThread_AfterTheStall_LeavesAndTheRuntimeKeepsWorking()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, SpareThreadDelay = TimeSpan.FromMilliseconds(5) });
        for (int round = 0; round < 3; round++)
        {
            int result = TestHelpers.OnThread(() => BlockOnAWorker(runtime).Result);
            Assert.Equal(7, result);
        }

        // Spares leave once idle for a delay; ordinary work then runs on the worker alone.
        TestHelpers.OnThread(() =>
        {
            while (runtime.LiveSpareCount != 0)
            {
                Thread.Sleep(1);
            }
        });
        Assert.Equal(41, TestHelpers.OnThread(() => runtime.Spawn(40, static async x => { await Task.Yield(); return x + 1; }).Wait()));
    }

    private static async Job Spin(StrongBox<bool> stop)
    {
        while (!Volatile.Read(ref stop.Value))
        {
            await Task.Yield();
        }
    }

    [Fact]
    public void SpareThread_AfterAPassingStallUnderSustainedLoad_LeavesWhileTheLoadGoesOn()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, SpareThreadDelay = TimeSpan.FromMilliseconds(5) });
        var stop = new StrongBox<bool>();
        var spinners = new Job[8];
        try
        {
            for (int i = 0; i < spinners.Length; i++)
            {
                spinners[i] = runtime.Spawn(stop, static s => Spin(s));
            }

            // The only worker blocks for a while with spinners queued behind it: a stall.
            Job blocker = runtime.Spawn(300, static ms => Thread.Sleep(ms));
            TestHelpers.OnThread(() =>
            {
                while (runtime.SparesStarted == 0)
                {
                    Thread.Sleep(1);
                }

                blocker.Wait();

                // The worker is back and the spinners keep every thread busy: the spare has no
                // reason left to run beside the worker, and must not wait for the load to end.
                while (runtime.LiveSpareCount != 0)
                {
                    Thread.Sleep(1);
                }
            }, timeout: TimeSpan.FromSeconds(30));

            Assert.False(Volatile.Read(ref stop.Value));
            Assert.All(spinners, s => Assert.False(s.IsCompleted)); // the load was still going on
        }
        finally
        {
            Volatile.Write(ref stop.Value, true);
        }

        TestHelpers.OnThread(() =>
        {
            foreach (Job spinner in spinners)
            {
                spinner.Wait();
            }
        });
    }

    [Fact]
    public void MaxSpareThreadsZero_DisablesSpares()
    {
        var options = new RuntimeOptions { MaxSpareThreads = 0 };
        Assert.Equal(0, options.MaxSpareThreads);
        Assert.Throws<ArgumentOutOfRangeException>(() => new RuntimeOptions { MaxSpareThreads = -1 });
        Assert.Throws<ArgumentOutOfRangeException>(() => new RuntimeOptions { SpareThreadDelay = TimeSpan.Zero });
    }

    [Fact]
    public void ManyJobsBlockedOnTheirOwnTasks_AllComplete()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, SpareThreadDelay = TimeSpan.FromMilliseconds(5) });
        int sum = TestHelpers.OnThread(() =>
        {
            var jobs = new Task<int>[16];
            for (int i = 0; i < jobs.Length; i++)
            {
                jobs[i] = BlockOnAWorker(runtime);
            }

            int total = 0;
            foreach (Task<int> job in jobs)
            {
                total += job.Result;
            }

            return total;
        });
        Assert.Equal(16 * 7, sum);
    }

    [Fact]
    public void Dispose_WhileAPlainThreadRunsAJobASpareHadTaken_TheSpareStaysForTheRestOfTheJob()
    {
        // A spare that took a job's entry, found it claimed by the waiting thread (a guest run), and
        // then saw nothing to do, left the drain at once; as the last thread out it finished the
        // disposal, and the rest of the guest's job ended canceled.
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, MaxSpareThreads = 1, SpareThreadDelay = TimeSpan.FromMilliseconds(20) });
        var releaseBlocker = new ManualResetEventSlim();
        var releaseX = new ManualResetEventSlim();
        var xRunning = new ManualResetEventSlim();
        var spawned = new ManualResetEventSlim();
        Job<int> guestJob = default;
        runtime.SpawnDetached(() =>
        {
            runtime.SpawnDetached(() => { xRunning.Set(); releaseX.Wait(); return Job.CompletedJob; });
            guestJob = runtime.Spawn(async () =>
            {
                releaseX.Set();
                Thread.Sleep(300); // the synchronous part of the job, run by the waiting thread
                await Task.Yield(); // the rest: queued to the draining runtime
                return 42;
            });
            runtime.SpawnDetached(() => Job.CompletedJob);
            runtime.SpawnDetached(() => Job.CompletedJob);
            spawned.Set();
            releaseBlocker.Wait(); // the only worker is blocked: a spare starts and steals from its queue
            return Job.CompletedJob;
        });

        Assert.True(xRunning.Wait(TimeSpan.FromSeconds(30)), "no spare started");
        Assert.True(spawned.Wait(TimeSpan.FromSeconds(30)));
        var disposer = new Thread(runtime.Dispose) { IsBackground = true };
        disposer.Start();
        Assert.True(SpinWait.SpinUntil(() => runtime.IsDisposed, TimeSpan.FromSeconds(30)));
        Thread.Sleep(50);
        releaseBlocker.Set(); // the worker runs what is left in its queue, sees no work and no guest, and leaves
        Thread.Sleep(200);
        int result = TestHelpers.OnThread(() => guestJob.Wait(), timeout: TimeSpan.FromSeconds(60));
        Assert.True(disposer.Join(TimeSpan.FromSeconds(30)), "Dispose hung");
        Assert.Equal(42, result);
    }
}
