using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

public class MultiThreadRuntimeTests
{
    [Fact]
    public void Options_InvalidValues_ThrowArgumentOutOfRange()
    {
        var options = new RuntimeOptions();
        Assert.Throws<ArgumentOutOfRangeException>(() => options.WorkerCount = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.WorkerCount = -1);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.LocalQueueCapacity = 100);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.GlobalQueueInterval = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.LazyWakeDelay = TimeSpan.FromSeconds(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => options.ThreadStackSize = -1);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.IdleSpin = TimeSpan.FromTicks(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => options.IdleSpin = TimeSpan.FromMilliseconds(11));
        Assert.Throws<ArgumentNullException>(() => new MultiThreadRuntime(null!));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(32 * 1024)]
    [InlineData(RuntimeOptions.MinThreadStackSize - 1)]
    public void Options_ThreadStackSizeBelowTheMinimum_ThrowsArgumentOutOfRange(int size)
    {
        // Below it, a worker's inline levels overflowed its stack: the process ended.
        var options = new RuntimeOptions();
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => options.ThreadStackSize = size);
        Assert.Contains("ThreadStackSize", error.Message);
        options.ThreadStackSize = 0; // the platform default stays allowed
        Assert.Equal(0, options.ThreadStackSize);
    }

    [Fact]
    public void Options_MinimumThreadStackSize_RunsDeepRecursion()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, ThreadStackSize = RuntimeOptions.MinThreadStackSize });
        Assert.Equal(200_000L * 200_001 / 2, TestHelpers.OnThread(() => runtime.Run(static () => Sum(200_000))));

        static async Job<long> Sum(long n) => n == 0 ? 0 : n + await Sum(n - 1);
    }

    [Fact]
    public void Options_OutOfRange_MessageNamesTheProperty()
    {
        var options = new RuntimeOptions();
        Assert.Contains("RuntimeOptions.WorkerCount", Assert.Throws<ArgumentOutOfRangeException>(() => options.WorkerCount = 0).Message);
        Assert.Contains("RuntimeOptions.MaxSpareThreads", Assert.Throws<ArgumentOutOfRangeException>(() => options.MaxSpareThreads = -1).Message);
        Assert.Contains("RuntimeOptions.SpareThreadDelay", Assert.Throws<ArgumentOutOfRangeException>(() => options.SpareThreadDelay = TimeSpan.Zero).Message);
    }

    [Fact]
    public void Options_NullThreadNamePrefix_ThrowsArgumentNull()
    {
        var options = new RuntimeOptions();
        Assert.Throws<ArgumentNullException>(() => options.ThreadNamePrefix = null!);
        Assert.Equal("Myriad worker", options.ThreadNamePrefix);
    }

    [Fact]
    public void Workers_AreNamedAndCounted()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 3, ThreadNamePrefix = "unit" });
        Assert.Equal(3, runtime.WorkerCount);
        string? name = TestHelpers.OnThread(() => runtime.Run(static async () =>
        {
            await Task.Yield();
            return Thread.CurrentThread.Name;
        }));
        Assert.StartsWith("unit ", name);
    }

    [Fact]
    public void SpawnDetached_FromPlainThreadThatNeverWaits_StillRuns()
    {
        // The lazy wake for plain-thread spawns must be paid by the timer when nobody else pays it.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Thread.Sleep(50); // let the workers park
        using var ran = new ManualResetEventSlim();
        runtime.SpawnDetached(ran, static r => r.Set());
        Assert.True(ran.Wait(TimeSpan.FromSeconds(10)), "a detached spawn from a plain thread never ran");
    }

    [Fact]
    public void SpawnDetached_StatelessBody_RunsOnAWorkerAndReportsItsFailure()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, ThreadNamePrefix = "detached" });
        using var ran = new ManualResetEventSlim();
        using var reported = new ManualResetEventSlim();
        string? threadName = null;
        Exception? unobserved = null;
        runtime.UnobservedException += (_, e) =>
        {
            unobserved = e.Exception;
            reported.Set();
        };
        runtime.SpawnDetached(async () =>
        {
            await Job.Delay(1);
            threadName = Thread.CurrentThread.Name;
            ran.Set();
        });
        runtime.SpawnDetached(static () => throw new InvalidTimeZoneException("detached failure"));
        Assert.True(ran.Wait(TimeSpan.FromSeconds(10)), "the stateless detached job never ran");
        Assert.StartsWith("detached ", threadName);
        Assert.True(reported.Wait(TimeSpan.FromSeconds(10)), "the detached failure was not reported");
        Assert.IsType<InvalidTimeZoneException>(unobserved);
        Assert.Throws<ArgumentNullException>(() => runtime.SpawnDetached((Func<Job>)null!));
    }

    [Fact]
    public void Spawn_FromPlainThreadThenAwaitAsync_Completes()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Thread.Sleep(50);
        Task<int> task = runtime.Spawn(21, static async x =>
        {
            await Task.Yield();
            return x * 2;
        }).AsTask();
        Assert.True(task.Wait(TimeSpan.FromSeconds(10)));
        Assert.Equal(42, task.Result);
    }

    [Fact]
    public void Dispose_DrainsQueuedJobs()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        int ran = 0;
        var counter = new StrongBox<int>();
        for (int i = 0; i < 10_000; i++)
        {
            runtime.SpawnDetached(counter, static c => Interlocked.Increment(ref c.Value));
        }

        TestHelpers.OnThread(runtime.Dispose);
        ran = Volatile.Read(ref counter.Value);
        Assert.Equal(10_000, ran);
    }

    [Fact]
    public void Dispose_RightAfterTheTokenOfTheDelaysJobsAwaitWasCanceled_EveryJobRunsItsFinally()
    {
        // The TPL continues a Task.Delay ended by its token on the .NET thread pool when no context
        // is captured: a disposal that began before the pool delivered the resumes abandoned the
        // jobs, finally blocks not run.
        const int Jobs = 50;
        for (int round = 0; round < 40; round++)
        {
            var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
            using var cts = new CancellationTokenSource();
            var suspended = new CountdownEvent(Jobs);
            var ended = new StrongBox<int>();
            for (int i = 0; i < Jobs; i++)
            {
                runtime.SpawnDetached((cts.Token, suspended, ended), static async s =>
                {
                    try
                    {
                        Task wait = Task.Delay(TimeSpan.FromMinutes(1), s.Token);
                        s.suspended.Signal();
                        await wait;
                    }
                    catch (OperationCanceledException)
                    {
                    }
                    finally
                    {
                        Interlocked.Increment(ref s.ended.Value);
                    }
                });
            }

            Assert.True(suspended.Wait(TimeSpan.FromSeconds(30)));
            Thread.Sleep(1); // let the last one register
            cts.Cancel();

            TestHelpers.OnThread(runtime.Dispose);
            Assert.Equal(Jobs, Volatile.Read(ref ended.Value));
        }
    }

    [Fact]
    public void Dispose_FromAJobThatThenCompletesAnAsynchronousSourceAnotherJobAwaits_TheDrainRunsTheOtherJobsFinally()
    {
        // The source posts the waiting job's resume to Myriad's resume context while the drain
        // runs. Sent on through the thread pool, it reached the runtime after the drain had
        // finished, and the job was abandoned, its finally not run.
        int lost = 0;
        for (int round = 0; round < 100; round++)
        {
            var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
            var source = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var suspended = new ManualResetEventSlim();
            var ended = new StrongBox<int>();
            runtime.SpawnDetached((source, suspended, ended), static async s =>
            {
                try
                {
                    Task wait = s.source.Task;
                    s.suspended.Set();
                    await wait;
                }
                finally
                {
                    Interlocked.Increment(ref s.ended.Value);
                }
            });
            Assert.True(suspended.Wait(TestHelpers.DefaultTimeout));
            Thread.Sleep(1); // let it register
            var completed = new ManualResetEventSlim();
            runtime.SpawnDetached((runtime, source, completed), static s =>
            {
                s.runtime.Dispose(); // from its own worker: starts the disposal and returns
                s.source.SetResult();
                s.completed.Set();
            });
            Assert.True(completed.Wait(TestHelpers.DefaultTimeout));
            TestHelpers.OnThread(runtime.Dispose);
            lost += 1 - Volatile.Read(ref ended.Value);
        }

        Assert.Equal(0, lost);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void Stats_AfterDispose_ShowNoSearchingOrParkedWorker(int workers)
    {
        for (int round = 0; round < 10; round++)
        {
            var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = workers });
            runtime.Spawn(0, static async _ => await Task.Yield()).Wait();
            runtime.Dispose();
            Myriad.Diagnostics.SchedulerStats stats = runtime.Stats();
            Assert.Equal(0, stats.SearchingWorkers);
            Assert.Equal(0, stats.ParkedWorkers);
            Assert.Equal(0, stats.QueuedItems);
        }
    }

    [Fact]
    public void Dispose_WhileAJobKeepsSpawning_RefusesItsSpawnsAndTerminates()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var counter = new StrongBox<int>();
        var refused = new StrongBox<Exception?>();
        var started = new ManualResetEventSlim();
        runtime.SpawnDetached((runtime, counter, refused, started), static async s =>
        {
            try
            {
                for (int i = 0; i < 1_000_000; i++)
                {
                    await s.runtime.Spawn(s.counter, static c => Interlocked.Increment(ref c.Value));
                    s.started.Set();
                }
            }
            catch (ObjectDisposedException e)
            {
                s.refused.Value = e; // spawning is refused once disposal started, on the runtime's own threads too
            }
        });
        started.Wait(TestHelpers.DefaultTimeout);
        TestHelpers.OnThread(runtime.Dispose);
        Assert.IsType<ObjectDisposedException>(refused.Value);
        Assert.InRange(counter.Value, 1, 999_999);
    }

    [Fact]
    public void Dispose_WhileJobWaitsForever_DoesNotHang()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var never = new Promise<int>();
        Job<int> handle = runtime.Spawn(never, static async p => await p.Job);
        TestHelpers.OnThread(runtime.Dispose, timeout: TimeSpan.FromSeconds(30));
        Assert.False(handle.IsCompleted);
    }

    [Fact]
    public void Resume_AfterDisposalFinished_CancelsTheJobInsteadOfRunningItElsewhere()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var never = new Promise<int>();
        var ranAfter = new StrongBox<bool>();
        Job<int> handle = runtime.Spawn((never, ranAfter), static async s =>
        {
            int value = await s.never.Job;
            s.ranAfter.Value = true; // must not run: the runtime is gone
            return value;
        });
        TestHelpers.OnThread(runtime.Dispose, timeout: TimeSpan.FromSeconds(30));

        never.SetResult(5); // the wake-up arrives after the disposal finished
        var error = Assert.Throws<OperationCanceledException>(() => TestHelpers.OnThread(() => handle.Wait()));
        Assert.Contains("disposed", error.Message);
        Assert.False(ranAfter.Value);
    }

    [Fact]
    public async Task DisposeAsync_StopsTheRuntime()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        runtime.Spawn(0, static _ => { }).Wait();
        await runtime.DisposeAsync();
        Assert.True(runtime.IsDisposed);
    }

    [Fact]
    public void Dispose_FromOwnWorker_DoesNotDeadlock()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        TestHelpers.OnThread(() => runtime.Spawn(runtime, static rt => rt.Dispose()).Wait());
        Assert.True(runtime.IsDisposed);
    }

    [Fact]
    public void Wait_OnWorker_KeepsRunningOtherJobs()
    {
        // One worker: a job that blocks waiting for another job must not deadlock the runtime.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        int result = TestHelpers.OnThread(() => runtime.Run(runtime, static rt =>
        {
            Job<int> other = rt.Spawn(5, static async x =>
            {
                await Task.Yield();
                return x + 1;
            });
            return Job.FromResult(other.Wait());
        }));
        Assert.Equal(6, result);
    }

    [Fact]
    public void GlobalQueue_IsServedWhileTwoJobsPingPongLocally()
    {
        // Two jobs waking each other keep a worker's next-job slot busy; work injected from outside
        // must still be served (the fair global-queue interval).
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var stop = new StrongBox<bool>();
        Job pingPong = runtime.Spawn(stop, static async s =>
        {
            while (!Volatile.Read(ref s.Value))
            {
                var a = new Promise<int>();
                Job<int> waiter = Echo(a.Job);
                a.SetResult(1);
                await waiter;
                await Task.Yield();
            }

            static async Job<int> Echo(Job<int> j) => await j;
        });
        TestHelpers.OnThread(() =>
        {
            Thread.Sleep(20);
            Assert.Equal(3, runtime.Spawn(2, static x => Job.FromResult(x + 1)).AsTask().Result);
        });
        stop.Value = true;
        TestHelpers.OnThread(() => pingPong.Wait());
    }

    [Fact]
    public void TimerWakeUp_BehindABacklogOfSpawnedJobs_RunsBeforeTheBacklog()
    {
        // A delay that ends while thousands of spawned jobs wait to start must resume its job next,
        // not after the whole backlog (it would then be as late as the backlog is long).
        const int Backlog = 3000;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var ran = new StrongBox<int>();
        int ranAtWake = TestHelpers.OnThread(() => runtime.Run((runtime, ran), static async s =>
        {
            Job<int> sleeper = s.runtime.Spawn(s.ran, static async ran =>
            {
                await Job.Delay(TimeSpan.FromMilliseconds(5));
                return Volatile.Read(ref ran.Value);
            });
            var backlog = new Job[Backlog];
            for (int i = 0; i < Backlog; i++)
            {
                backlog[i] = s.runtime.Spawn(s.ran, static ran =>
                {
                    long until = System.Diagnostics.Stopwatch.GetTimestamp() + (System.Diagnostics.Stopwatch.Frequency / 20_000); // 50 us
                    while (System.Diagnostics.Stopwatch.GetTimestamp() < until)
                    {
                    }

                    Interlocked.Increment(ref ran.Value);
                });
            }

            int atWake = await sleeper;
            await Job.WhenAll(backlog);
            return atWake;
        }));
        Assert.True(ranAtWake < Backlog / 2, $"the delay's job resumed after {ranAtWake} of {Backlog} queued jobs");
    }

    [Fact]
    public void SingleSpawnFromBusyWorker_RunsOnAnotherWorkerWhileTheSpawnerKeepsRunning()
    {
        // The wake for a lone locally spawned job is deferred (the spawner usually runs it next);
        // if the spawner stays busy instead, the wake timer must hand the job to the idle sibling.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        bool ran = TestHelpers.OnThread(() => runtime.Run(runtime, static rt =>
        {
            using var started = new ManualResetEventSlim();
            Job child = rt.Spawn(started, static e => e.Set());
            bool seen = started.Wait(TimeSpan.FromSeconds(10)); // busy: never returns to the worker loop meanwhile
            child.Wait();
            return Job.FromResult(seen);
        }));
        Assert.True(ran, "a job spawned by a busy worker was stranded in its queue");
    }

    private sealed class Deferral
    {
        public readonly Promise<int> Promise = new();
        public readonly ManualResetEventSlim Resumed = new();
        public volatile bool ResumedWhileBusy;
    }

    [Fact]
    public void DeferredContinuation_InTheSlotOfAWorkerThatStaysBusy_IsRunByASibling()
    {
        // The trampoline defers a continuation completed deep in a call chain to the worker's
        // next-job slot; if that worker then computes for long, a parked sibling must take it.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var d = new Deferral();
        runtime.SpawnDetached(d, static async d =>
        {
            await d.Promise.Job;
            d.Resumed.Set();
        });
        Thread.Sleep(100); // suspended on the promise; both workers park
        runtime.SpawnDetached(d, static d =>
        {
            Thread.Sleep(50); // long enough for the wake watchdog armed by this spawn to disarm
            Myriad.Internal.PerThread state = Myriad.Internal.PerThread.Current;
            int depth = state.Depth;
            state.Depth = Myriad.Internal.MyriadDefaults.MaxInlineDepth; // as deep as the trampoline allows
            d.Promise.SetResult(1); // the continuation goes to this worker's next-job slot
            state.Depth = depth;
            d.ResumedWhileBusy = d.Resumed.Wait(TimeSpan.FromSeconds(20)); // this worker stays busy meanwhile
        });
        Assert.True(d.Resumed.Wait(TimeSpan.FromSeconds(30)), "the continuation never ran");
        SpinWait.SpinUntil(() => d.ResumedWhileBusy, TimeSpan.FromSeconds(30));
        Assert.True(d.ResumedWhileBusy, "the continuation waited until its worker was free again");
    }

    [Fact]
    public void Dispose_WhileAnotherDisposalDrains_ReturnsOnlyOnceDrained()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var ran = new int[1];
        for (int i = 0; i < 200; i++)
        {
            runtime.SpawnDetached(ran, static r =>
            {
                Thread.Sleep(1);
                Interlocked.Increment(ref r[0]);
            });
        }

        ValueTask first = runtime.DisposeAsync();
        Thread.Sleep(5);
        runtime.Dispose();
        Assert.Equal(200, Volatile.Read(ref ran[0]));
        Assert.True(runtime.DisposeAsync().IsCompleted);
        first.AsTask().Wait();
    }

    [Fact]
    public void DisposeAsyncWithToken_DrainNeverEnds_ThrowsOnCancelAndLaterDisposalsReturnAtOnce()
    {
        // A job that ignores every cancellation keeps the drain going forever: the owner gives up
        // waiting (a host's shutdown timeout), and then a container's Dispose must not block.
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var stop = new StrongBox<bool>();
        runtime.SpawnDetached(stop, static async s =>
        {
            while (!Volatile.Read(ref s.Value))
            {
                await Task.Yield();
            }
        });

        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromMilliseconds(100));
            Task disposal = runtime.DisposeAsync(timeout.Token).AsTask();
            OperationCanceledException error = TestHelpers.OnThread(
                () => Assert.ThrowsAny<OperationCanceledException>(() => disposal.GetAwaiter().GetResult()),
                timeout: Bounded.Limit);
            Assert.Equal(timeout.Token, error.CancellationToken);
            Assert.True(runtime.IsDisposed);

            Assert.True(TestHelpers.OnThread(() => { runtime.Dispose(); return true; }, timeout: Bounded.Limit));
            Assert.True(runtime.DisposeAsync().IsCompleted);
        }
        finally
        {
            Volatile.Write(ref stop.Value, true); // the drain ends, and the workers leave
        }
    }

    [Fact]
    public void DisposeAsyncWithToken_DrainEndsFirst_CompletesAndLaterDisposalsWaitAsBefore()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var ran = new int[1];
        for (int i = 0; i < 50; i++)
        {
            runtime.SpawnDetached(ran, static r => Interlocked.Increment(ref r[0]));
        }

        using var patience = new CancellationTokenSource(Bounded.Limit);
        Assert.True(runtime.DisposeAsync(patience.Token).AsTask().Wait(Bounded.Limit));
        Assert.Equal(50, Volatile.Read(ref ran[0]));
        Assert.True(runtime.DisposeAsync().IsCompleted);
    }

    private sealed class Blocked
    {
        public MultiThreadRuntime Runtime = null!;
        public readonly ManualResetEventSlim LoopStarted = new();
        public readonly ManualResetEventSlim ItemRan = new();
        public volatile bool Stop;
        public volatile bool RanWhileBlocked;
    }

    [Fact]
    public void QueuedItem_BehindABlockedWorker_WhileAnotherWorkerKeepsRunning_IsStolen()
    {
        // One worker keeps running items of its own (the runtime as a whole makes progress), a
        // second blocks right after queuing an item locally, the others park: the watchdog must
        // see that the blocked worker's queue does not move and wake a parked worker to steal it.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 4 });
        var b = new Blocked { Runtime = runtime };
        Job busy = runtime.Spawn(b, static async b =>
        {
            b.LoopStarted.Set();
            while (!b.Stop)
            {
                await b.Runtime.Spawn(0, static _ => { });
            }
        });
        Assert.True(b.LoopStarted.Wait(TimeSpan.FromSeconds(30)));
        runtime.SpawnDetached(b, static b =>
        {
            Thread.Sleep(200); // the other workers park meanwhile
            b.Runtime.SpawnDetached(b, static b => b.ItemRan.Set()); // queued on this worker
            b.RanWhileBlocked = b.ItemRan.Wait(TimeSpan.FromSeconds(20)); // blocked on something else
        });
        Assert.True(b.ItemRan.Wait(TimeSpan.FromSeconds(40)), "the item never ran");
        SpinWait.SpinUntil(() => b.RanWhileBlocked, TimeSpan.FromSeconds(30));
        b.Stop = true;
        busy.Wait();
        Assert.True(b.RanWhileBlocked, "the item waited until its worker was free again");
    }

    [Fact]
    public void Options_ChangedAfterConstruction_DoNotReachTheRuntime()
    {
        var options = new RuntimeOptions { WorkerCount = 2 };
        using var runtime = new MultiThreadRuntime(options);
        int searching = runtime.Options.MaxSearchingWorkers;
        options.WorkerCount = 64;
        options.LazyWakeDelay = TimeSpan.Zero;
        Assert.Equal(searching, runtime.Options.MaxSearchingWorkers);
        Assert.Equal(1, runtime.Options.LazyWakeDelayMilliseconds);
        Assert.Equal(2, runtime.WorkerCount);
    }

    [Fact]
    public void Dispose_FromAJobThatAnotherWorkerWaitsFor_DoesNotDeadlock()
    {
        // Joining the other workers from the disposing job would wait for a worker that waits for
        // that very job: on a worker, Dispose only starts the shutdown.
        for (int round = 0; round < 5; round++)
        {
            // The disposer waits until the waiter runs, so both spawns land before the disposal
            // (a fixed sleep between them let a slow machine dispose first: ObjectDisposedException).
            var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
            var waiterRuns = new ManualResetEventSlim();
            Job<int> disposer = runtime.Spawn((runtime, waiterRuns), static s =>
            {
                s.waiterRuns.Wait();
                Thread.Sleep(50); // let the waiter reach its Wait()
                s.runtime.Dispose();
                return Job.FromResult(1);
            });
            Job<int> waiter = runtime.Spawn((disposer, waiterRuns), static s =>
            {
                s.waiterRuns.Set();
                return Job.FromResult(s.disposer.Wait());
            });
            Task<int> done = Task.Run(() => waiter.Wait());
            Assert.True(done.Wait(TimeSpan.FromSeconds(30)), "Dispose on a worker deadlocked with a worker waiting for it");
            Assert.Equal(1, done.Result);
            runtime.Dispose(); // from outside: returns once the drain is complete
            Assert.True(runtime.DisposeAsync().IsCompleted);
        }
    }

    [Fact]
    public void Dispose_FromAJobAPlainThreadRunsInline_DoesNotDeadlock()
    {
        // The plain thread inside Run runs the job itself (a guest of the runtime): Dispose there
        // joined the workers, one of which waited for what the job does after Dispose.
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var promise = new Promise<int>();
        using var started = new ManualResetEventSlim();
        Job<int> waiter = runtime.Spawn((promise, started), static s =>
        {
            s.started.Set();
            Thread.Sleep(200); // keeps the one worker busy, so that Run below runs its job inline
            return Job.FromResult(s.promise.Job.Wait());
        });
        started.Wait();
        TestThread runner = TestThread.Start(() => runtime.Run((runtime, promise), static s =>
        {
            s.runtime.Dispose();
            s.promise.SetResult(7);
            return Job.CompletedJob;
        }), "runner");

        Assert.True(runner.Join(TimeSpan.FromSeconds(30)), "Dispose inside a job run by a guest thread deadlocked");
        Assert.Equal(7, waiter.Wait());
        runtime.Dispose();
    }

    [Fact]
    public void DisposeAsync_ReturnsWithTheRuntimeDisposed_SoSpawnsAreRefused()
    {
        // The disposal ran on another thread and set the flag there: a spawn right after the call
        // was accepted (915 of 1,000 runs).
        for (int round = 0; round < 50; round++)
        {
            var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
            ValueTask disposal = runtime.DisposeAsync();
            Assert.True(runtime.IsDisposed);
            Assert.Throws<ObjectDisposedException>(() => runtime.SpawnDetached(0, static _ => { }));
            Assert.True(disposal.AsTask().Wait(TimeSpan.FromSeconds(30)));
        }
    }

    [Fact]
    public void ClaimIds_PastTwoBillionRuntimes_StayPositiveAndConsecutiveOnesDiffer()
    {
        // An int counter went to 0 and below after 2^31 runtimes ("not queued": no spawn started),
        // and a first fix gave two consecutive runtimes the same id at the wrap.
        long[] counts = [1, int.MaxValue - 1, int.MaxValue, (long)int.MaxValue + 1, uint.MaxValue, (long)uint.MaxValue + 1, long.MaxValue - 1];
        foreach (long n in counts)
        {
            int id = JobRuntime.ClaimIdFor(n);
            int next = JobRuntime.ClaimIdFor(n + 1);
            Assert.InRange(id, 1, int.MaxValue);
            Assert.InRange(next, 1, int.MaxValue);
            Assert.NotEqual(id, next);
        }
    }
}
