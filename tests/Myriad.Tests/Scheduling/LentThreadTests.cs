using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// A plain thread that blocks in <c>Run</c> or <c>Wait()</c> on a spawned job nobody started yet
/// runs that job itself up to its first suspension: it is lent for that one job. Another job that
/// the lent stretch wakes, and Task code of the runtime's scheduler, must still run on the workers.
/// </summary>
public class LentThreadTests
{
    private const string Prefix = "lent-test worker";
    private const int Rounds = 100;

    private static MultiThreadRuntime NewRuntime() => new(new RuntimeOptions { WorkerCount = 2, ThreadNamePrefix = Prefix });

    private static bool OnWorker() => Thread.CurrentThread.Name?.StartsWith(Prefix, StringComparison.Ordinal) == true;

    public enum Wake
    {
        Promise,
        UnbufferedSend,
        MutexRelease,
        WaitGroupDone,
    }

    private sealed class Sleeper
    {
        public readonly Promise<int> Promise = new();
        public readonly Chan<int> Channel = Chan.Unbuffered<int>();
        public readonly JobMutex Mutex = new();
        public readonly WaitGroup Group = new();
        public readonly ManualResetEventSlim Parked = new();
        public JobMutex.Releaser Held;
        public volatile bool ResumedOnWorker;
    }

    private static Job Sleep(Sleeper s, Wake wake) => wake switch
    {
        Wake.Promise => Await(s, s.Promise.Job),
        Wake.UnbufferedSend => AwaitReceive(s),
        Wake.MutexRelease => AwaitMutex(s),
        _ => AwaitGroup(s),
    };

    private static async Job Await(Sleeper s, Job<int> job)
    {
        s.Parked.Set();
        await job;
        s.ResumedOnWorker = OnWorker();
    }

    private static async Job AwaitReceive(Sleeper s)
    {
        s.Parked.Set();
        await s.Channel.ReceiveAsync();
        s.ResumedOnWorker = OnWorker();
    }

    private static async Job AwaitMutex(Sleeper s)
    {
        s.Parked.Set();
        using (await s.Mutex.LockAsync())
        {
            s.ResumedOnWorker = OnWorker();
        }
    }

    private static async Job AwaitGroup(Sleeper s)
    {
        s.Parked.Set();
        await s.Group.WaitAsync();
        s.ResumedOnWorker = OnWorker();
    }

    private static async Job WakeIt(Sleeper s, Wake wake)
    {
        switch (wake)
        {
            case Wake.Promise:
                s.Promise.SetResult(1);
                break;
            case Wake.UnbufferedSend:
                await s.Channel.SendAsync(1);
                break;
            case Wake.MutexRelease:
                s.Held.Dispose();
                break;
            default:
                s.Group.Done();
                break;
        }
    }

    [Theory]
    [InlineData(Wake.Promise)]
    [InlineData(Wake.UnbufferedSend)]
    [InlineData(Wake.MutexRelease)]
    [InlineData(Wake.WaitGroupDone)]
    public void Run_OnAPlainThread_JobItWakesResumesOnAWorker(Wake wake)
    {
        using MultiThreadRuntime runtime = NewRuntime();
        int offWorkers = 0;
        for (int round = 0; round < Rounds; round++)
        {
            var s = new Sleeper();
            if (wake == Wake.MutexRelease)
            {
                Assert.True(s.Mutex.TryLock(out s.Held)); // released by the lent job below
            }
            else if (wake == Wake.WaitGroupDone)
            {
                s.Group.Add();
            }

            Job sleeper = runtime.Spawn((s, wake), static x => Sleep(x.s, x.wake));
            Assert.True(s.Parked.Wait(TimeSpan.FromSeconds(30)));
            Thread.Sleep(1); // let it reach its await (a sleeper that did not only makes the round pass)
            TestHelpers.OnThread(() => runtime.Run((s, wake), static x => WakeIt(x.s, x.wake)));
            sleeper.AsTask().Wait(TimeSpan.FromSeconds(30));
            if (!s.ResumedOnWorker)
            {
                offWorkers++;
            }
        }

        Assert.Equal(0, offWorkers);
    }

    [Fact]
    public void Wait_OnAThreadPoolThread_JobItWakesResumesOnAWorker()
    {
        using MultiThreadRuntime runtime = NewRuntime();
        int offWorkers = 0;
        for (int round = 0; round < Rounds; round++)
        {
            var s = new Sleeper();
            Job sleeper = runtime.Spawn(s, static x => Sleep(x, Wake.Promise));
            Assert.True(s.Parked.Wait(TimeSpan.FromSeconds(30)));
            Thread.Sleep(1);
            Task.Run(() => runtime.Spawn(s, static x => WakeIt(x, Wake.Promise)).Wait()).Wait();
            sleeper.AsTask().Wait(TimeSpan.FromSeconds(30));
            if (!s.ResumedOnWorker)
            {
                offWorkers++;
            }
        }

        Assert.Equal(0, offWorkers);
    }

    [Fact]
    public void Wait_OnAThreadPoolThread_TaskOfTheRuntimesSchedulerItWakesRunsOnAWorker()
    {
        using MultiThreadRuntime runtime = NewRuntime();
        int offWorkers = 0;
        for (int round = 0; round < Rounds; round++)
        {
            var gate = new TaskCompletionSource();
            bool? resumedOnWorker = null;
            Task hosted = Task.Factory.StartNew(
                async () =>
                {
                    await gate.Task; // resumes through the runtime's TaskScheduler
                    resumedOnWorker = OnWorker();
                },
                CancellationToken.None,
                TaskCreationOptions.None,
                runtime.TaskScheduler).Unwrap();
            Thread.Sleep(1);
            Task.Run(() => runtime.Spawn(gate, static g => { g.SetResult(); }).Wait()).Wait();
            Assert.True(hosted.Wait(TimeSpan.FromSeconds(30)));
            if (resumedOnWorker != true)
            {
                offWorkers++;
            }
        }

        Assert.Equal(0, offWorkers);
    }

    [Fact]
    public void Run_OnAPlainThread_WakeForAJobItWakesIsPaidAtOnce()
    {
        // The lent thread never runs the job it queues, and returns from Run right after: a wake
        // deferred to the lazy-wake timer held the woken job for up to that delay.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, ThreadNamePrefix = Prefix, LazyWakeDelay = TimeSpan.FromSeconds(1) });
        var s = new Sleeper();
        Job sleeper = runtime.Spawn(s, static x => Sleep(x, Wake.Promise));
        Assert.True(s.Parked.Wait(TimeSpan.FromSeconds(30)));
        Thread.Sleep(50); // the sleeper suspends and the workers park, so the wake is owed to somebody

        int owed = TestHelpers.OnThread(() =>
        {
            runtime.Run(s, static x => WakeIt(x, Wake.Promise));
            return (int)Myriad.Internal.PerThread.Current.PendingWake;
        });

        Assert.Equal(0, owed);
        Assert.True(sleeper.AsTask().Wait(TimeSpan.FromSeconds(30)));
        Assert.True(s.ResumedOnWorker);
    }

    [Fact]
    public void Dispose_FromAnotherThreadWhileALentThreadRunsTheJob_WaitsAndRunsTheRestOfTheJob()
    {
        // The drain waited only for the workers: a job that the thread blocked in Wait() ran itself
        // was cut off by a Dispose from another thread, which returned at once, and the rest of the
        // job (after its next await) ended canceled instead of running.
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, MaxSpareThreads = 0, ThreadNamePrefix = Prefix });
        var s = new Stretch();
        runtime.SpawnDetached(s.Busy, static b => b.Wait()); // the only worker: busy, so the waiting thread runs the job
        Job<bool> job = runtime.Spawn(s, static async s =>
        {
            bool lent = !OnWorker();
            s.Inside.Set();
            s.Proceed.Wait();
            await Task.Yield(); // the rest of the job is queued to the draining runtime
            return lent;
        });

        // Dispose starts (on threads of its own: the test host's pool may be slow to start a task)
        // while the job is inside its synchronous stretch on the waiting thread, and must not
        // return before the job lets go.
        bool disposeReturnedEarly = true;
        var observer = new Thread(() =>
        {
            if (!s.Inside.Wait(TimeSpan.FromSeconds(30)))
            {
                return; // reported below: the job never ran lent
            }

            s.Busy.Set();
            var disposer = new Thread(runtime.Dispose) { IsBackground = true };
            disposer.Start();
            SpinWait.SpinUntil(() => runtime.IsDisposed, TimeSpan.FromSeconds(30));
            disposeReturnedEarly = disposer.Join(TimeSpan.FromMilliseconds(200));
            s.Proceed.Set();
            disposer.Join();
        }) { IsBackground = true };
        observer.Start();

        bool ranLent = TestHelpers.OnThread(() => job.Wait(), timeout: TimeSpan.FromSeconds(60));
        Assert.True(observer.Join(TimeSpan.FromSeconds(30)));
        Assert.True(ranLent);
        Assert.False(disposeReturnedEarly, "Dispose returned while the lent thread still ran the job");
    }

    [Fact]
    public void Dispose_FromTheJobALentThreadRuns_RestOfTheJobRunsInTheDrain()
    {
        // As a worker's job that disposes its runtime: Dispose returns at once there, and the job
        // goes on within the drain. On a lent thread the job ended canceled instead.
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, MaxSpareThreads = 0, ThreadNamePrefix = Prefix });
        var s = new Stretch();
        runtime.SpawnDetached(s.Busy, static b => b.Wait()); // the only worker: busy, so the waiting thread runs the job
        (bool lent, int result) = TestHelpers.OnThread(
            () => runtime.Run((runtime, s), static async x =>
            {
                bool lent = !OnWorker();
                x.runtime.Dispose();
                x.s.Busy.Set();
                await Task.Yield();
                return (lent, 42);
            }),
            timeout: TimeSpan.FromSeconds(60));

        Assert.True(lent);
        Assert.Equal(42, result);
        Assert.True(runtime.IsDisposed);
    }

    private sealed class Stretch
    {
        public readonly ManualResetEventSlim Busy = new();
        public readonly ManualResetEventSlim Inside = new();
        public readonly ManualResetEventSlim Proceed = new();
    }
}
