using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>The contract every runtime keeps; each runtime kind runs it through a subclass.</summary>
public abstract class RuntimeContractTests : IDisposable
{
    protected RuntimeContractTests() => Runtime = CreateRuntime();

    protected JobRuntime Runtime { get; }

    protected abstract JobRuntime CreateRuntime();

    public void Dispose() => Runtime.Dispose();

    private struct Numbers
    {
        public int A;
        public int B;
    }

    [Fact]
    public void Spawn_WithStructState_ReturnsBodyResult()
    {
        int result = TestHelpers.OnThread(() =>
            Runtime.Spawn(new Numbers { A = 40, B = 2 }, static n => Job.FromResult(n.A + n.B)).Wait());
        Assert.Equal(42, result);
    }

    [Fact]
    public void Spawn_SynchronousBody_RunsOnce()
    {
        var box = new StrongBox<int>();
        TestHelpers.OnThread(() => Runtime.Spawn(box, static b => Interlocked.Increment(ref b.Value)).Wait());
        Assert.Equal(1, box.Value);
    }

    [Fact]
    public void Spawn_ActionWithoutState_RunsOnceOnTheRuntime()
    {
        int runs = 0;
        JobRuntime? ranOn = null;
        TestHelpers.OnThread(() => Runtime.Spawn(() =>
        {
            Interlocked.Increment(ref runs);
            ranOn = JobRuntime.Current;
        }).Wait());
        Assert.Equal(1, runs);
        Assert.Same(Runtime, ranOn);
    }

    [Fact]
    public void Spawn_ActionThrows_ExceptionReachesAwaiter()
    {
        var error = Assert.Throws<InvalidTimeZoneException>(() => TestHelpers.OnThread(() =>
            Runtime.Spawn(() => { throw new InvalidTimeZoneException("action"); }).Wait()));
        Assert.Equal("action", error.Message);
    }

    [Fact]
    public void Spawn_AsyncLambdaWithoutResult_BindsToTheAsyncFormAndWaitsForItsEnd()
    {
        // With Spawn(Action) beside Spawn(Func<Job>), an async lambda must still bind to the job
        // form (as Task.Run binds it to Func<Task>): an async void body would end the job at its
        // first suspension.
        int steps = 0;
        TestHelpers.OnThread(() => Runtime.Run(() => Runtime.Spawn(async () =>
        {
            await Task.Yield();
            await Task.Yield();
            Interlocked.Increment(ref steps);
        })));
        Assert.Equal(1, steps);
    }

    [Fact]
    public void Spawn_ActionWithCanceledToken_EndsCanceledWithoutRunning()
    {
        int runs = 0;
        Assert.Throws<OperationCanceledException>(() => TestHelpers.OnThread(() =>
            Runtime.Spawn(() => { Interlocked.Increment(ref runs); }, new CancellationToken(canceled: true)).Wait()));
        Assert.Equal(0, runs);
    }

    [Fact]
    public void Spawn_NullAction_ThrowsArgumentNullException()
    {
        Assert.Throws<ArgumentNullException>("body", () => Runtime.Spawn((Action)null!));
        Assert.Throws<ArgumentNullException>("body", () => Runtime.SpawnDetached((Action)null!));
    }

    [Fact]
    public void SpawnDetached_ActionWithoutState_RunsOnceOnTheRuntime()
    {
        int runs = 0;
        JobRuntime? ranOn = null;
        TestHelpers.OnThread(() =>
        {
            Runtime.SpawnDetached(() =>
            {
                ranOn = JobRuntime.Current;
                Interlocked.Increment(ref runs);
            });
            Settle();
            Assert.True(SpinWait.SpinUntil(() => Volatile.Read(ref runs) == 1, TimeSpan.FromSeconds(30)));
        });
        Assert.Equal(1, runs);
        Assert.Same(Runtime, ranOn);
    }

    [Fact]
    public void Run_Action_RunsOnTheRuntimeAndReturnsWhenDone()
    {
        int runs = 0;
        JobRuntime? ranOn = null;
        TestHelpers.OnThread(() => Runtime.Run(() =>
        {
            ranOn = JobRuntime.Current;
            Interlocked.Increment(ref runs);
        }));
        Assert.Equal(1, runs);
        Assert.Same(Runtime, ranOn);

        var box = new StrongBox<int>();
        TestHelpers.OnThread(() => Runtime.Run(box, static b => Interlocked.Increment(ref b.Value)));
        Assert.Equal(1, box.Value);
    }

    [Fact]
    public void JobYield_InsideAJob_ResumesOnTheSameRuntime()
    {
        JobRuntime? after = TestHelpers.OnThread(() => Runtime.Run(static async () =>
        {
            await Job.Yield();
            await Job.Yield();
            return JobRuntime.Current;
        }));
        Assert.Same(Runtime, after);
    }

    [Fact]
    public void Spawn_BodyThrows_ExceptionReachesAwaiter()
    {
        var error = Assert.Throws<InvalidTimeZoneException>(() => TestHelpers.OnThread(() =>
            Runtime.Spawn(0, static _ => throw new InvalidTimeZoneException("boom")).Wait()));
        Assert.Equal("boom", error.Message);
    }

    [Fact]
    public void Spawn_AsyncBodyThrowsAfterAwait_ExceptionReachesAwaiter()
    {
        Assert.Throws<ArithmeticException>(() => TestHelpers.OnThread(() => Runtime.Run(static async () =>
        {
            await Task.Yield();
            throw new ArithmeticException();
#pragma warning disable CS0162 // the return type needs a value
            return 0;
#pragma warning restore CS0162
        })));
    }

    [Fact]
    public void Spawn_TokenCanceledBeforeStart_EndsCanceledWithoutRunning()
    {
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        var ran = new StrongBox<bool>();
        var error = Assert.Throws<OperationCanceledException>(() => TestHelpers.OnThread(() =>
            Runtime.Spawn(ran, static r => r.Value = true, cts.Token).Wait()));
        Assert.Equal(cts.Token, error.CancellationToken);
        Assert.False(ran.Value);
    }

    [Fact]
    public void Spawn_BodyThrowsOperationCanceled_EndsCanceled()
    {
        Assert.Throws<OperationCanceledException>(() => TestHelpers.OnThread(() =>
            Runtime.Spawn(0, static _ => throw new OperationCanceledException()).Wait()));
    }

    [Fact]
    public void Spawn_BodyReturnsAnAlreadyConsumedJob_FailsTheJobNotTheRuntime()
    {
        var promise = new Promise<int>();
        promise.SetResult(1);
        Job<int> consumed = promise.Job;
        Assert.Equal(1, consumed.Wait());
        var error = Assert.Throws<InvalidOperationException>(() => TestHelpers.OnThread(() =>
            Runtime.Spawn(consumed, static j => j).Wait()));
        Assert.Contains("no longer valid", error.Message);
        // The runtime still works.
        Assert.Equal(2, TestHelpers.OnThread(() => Runtime.Spawn(1, static x => Job.FromResult(x + 1)).Wait()));
    }

    [Fact]
    public void Spawn_NullBody_ThrowsArgumentNull()
    {
        Assert.Throws<ArgumentNullException>(() => Runtime.Spawn(0, (Func<int, Job<int>>)null!));
        Assert.Throws<ArgumentNullException>(() => Runtime.Spawn(0, (Func<int, Job>)null!));
        Assert.Throws<ArgumentNullException>(() => Runtime.Spawn(0, (Action<int>)null!));
        Assert.Throws<ArgumentNullException>(() => Runtime.SpawnDetached(0, (Action<int>)null!));
    }

    [Fact]
    public void Spawn_AfterDispose_ThrowsObjectDisposed()
    {
        JobRuntime runtime = CreateRuntime();
        runtime.Dispose();
        Assert.True(runtime.IsDisposed);
        Assert.Throws<ObjectDisposedException>(() => runtime.Spawn(0, static _ => { }));
        runtime.Dispose(); // idempotent
    }

    private sealed class SelfDisposal
    {
        public JobRuntime Runtime = null!;
        public volatile bool FinallyRan;
    }

    [Fact]
    public void DisposeAsync_AwaitedInOneOfItsOwnJobs_TheJobGoesOnToItsEnd()
    {
        // As Dispose() there: the shutdown starts and the await completes at once. Waiting for the
        // end of the disposal would wait for the end of the job's own runtime, after which the job
        // could only resume canceled, with its finally blocks skipped.
        JobRuntime runtime = CreateRuntime();
        var state = new SelfDisposal { Runtime = runtime };
        Job<int> job = runtime.Spawn(state, static async s =>
        {
            try
            {
                await Task.Yield(); // on the runtime's own thread, whoever waits for the handle
                await s.Runtime.DisposeAsync();
                return s.Runtime.IsDisposed ? 1 : -1;
            }
            finally
            {
                s.FinallyRan = true;
            }
        });
        Assert.Equal(1, TestHelpers.OnThread(() => job.Wait()));
        Assert.True(state.FinallyRan);
        Assert.True(runtime.IsDisposed);
        runtime.Dispose(); // returns: the disposal is complete or completes
    }

    [Fact]
    public void Run_NestedSpawnsFromInsideTheRuntime_AllComplete()
    {
        long sum = TestHelpers.OnThread(() => Runtime.Run(Runtime, static async rt =>
        {
            var handles = new Job<long>[200];
            for (int i = 0; i < handles.Length; i++)
            {
                handles[i] = rt.Spawn((long)i, static async x =>
                {
                    await Task.Yield();
                    return x * 2;
                });
            }

            long total = 0;
            foreach (Job<long> handle in handles)
            {
                total += await handle;
            }

            return total;
        }));
        Assert.Equal(2L * (199 * 200 / 2), sum);
    }

    [Fact]
    public void SpawnDetached_Failure_RaisesUnobservedException()
    {
        using var raised = new ManualResetEventSlim();
        Exception? seen = null;
        Runtime.UnobservedException += (_, e) =>
        {
            seen = e.Exception;
            raised.Set();
        };
        TestHelpers.OnThread(() =>
        {
            Runtime.SpawnDetached(0, static _ => throw new InsufficientExecutionStackException("lost?"));
            // Drive single-threaded runtimes; a multi-threaded one runs it on its own.
            Runtime.Run(static () => Job.FromResult(0));
            if (Runtime is SingleThreadRuntime single)
            {
                single.RunUntilIdle();
            }

            Assert.True(raised.Wait(TimeSpan.FromSeconds(30)));
        });
        Assert.IsType<InsufficientExecutionStackException>(seen);
    }

    /// <summary>Runs what is queued: a multi-threaded runtime on its own, a single-threaded one driven from here.</summary>
    private void Settle()
    {
        Runtime.Run(static () => Job.FromResult(0));
        if (Runtime is SingleThreadRuntime single)
        {
            single.RunUntilIdle();
        }
    }

    [Fact]
    public void SpawnDetached_TokenCanceledBeforeStart_NeverRunsIsCountedAndNotReported()
    {
        int reported = 0;
        Runtime.UnobservedException += (_, _) => Interlocked.Increment(ref reported);
        var ran = new StrongBox<int>();
        long before = Runtime.CompletedCount;
        TestHelpers.OnThread(() =>
        {
            using var cts = new CancellationTokenSource();
            cts.Cancel();
            Runtime.SpawnDetached(ran, static r => Interlocked.Increment(ref r.Value), cts.Token);
            Runtime.SpawnDetached(ran, static r => { Interlocked.Increment(ref r.Value); return Job.CompletedJob; }, cts.Token);
            Settle();
            Assert.True(SpinWait.SpinUntil(() => Runtime.CompletedCount - before >= 3, TimeSpan.FromSeconds(30)));
        });
        Assert.Equal(0, ran.Value);
        Assert.Equal(0, Volatile.Read(ref reported));
    }

    [Fact]
    public void SpawnDetached_SynchronousBodyThrows_RaisesUnobservedException()
    {
        var seen = new System.Collections.Concurrent.ConcurrentQueue<Exception>();
        Runtime.UnobservedException += (_, e) => seen.Enqueue(e.Exception);
        TestHelpers.OnThread(() =>
        {
            Runtime.SpawnDetached<int>(0, static (int _) => throw new DivideByZeroException("sync body"));
            Settle();
            Assert.True(SpinWait.SpinUntil(() => !seen.IsEmpty, TimeSpan.FromSeconds(30)));
        });
        Assert.IsType<DivideByZeroException>(Assert.Single(seen));
    }

    private static readonly AsyncLocal<string?> s_flowed = new();

    [Fact]
    public void SpawnDetached_UnderAnAsyncLocal_BodySeesTheSpawnersValue()
    {
        var seen = new StrongBox<string?>();
        using var done = new ManualResetEventSlim();
        TestHelpers.OnThread(() =>
        {
            s_flowed.Value = "spawner's";
            Runtime.SpawnDetached((seen, done), static async s =>
            {
                await Task.Yield();
                s.seen.Value = s_flowed.Value;
                s.done.Set();
            });
            s_flowed.Value = null;
            Settle();
            if (Runtime is SingleThreadRuntime single)
            {
                while (!done.IsSet)
                {
                    single.RunUntilIdle();
                    Thread.Sleep(1);
                }
            }

            Assert.True(done.Wait(TimeSpan.FromSeconds(30)));
        });
        Assert.Equal("spawner's", seen.Value);
    }

    private static async Job FailAfter(Job<int> gate, bool cancel)
    {
        await gate;
        throw cancel ? new OperationCanceledException("quiet") : new TimeZoneNotFoundException("after suspending");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void SpawnDetached_FailsAfterSuspending_ReportedUnlessCanceledAndCounted(bool cancel)
    {
        // A detached job that suspends is observed by the runtime's shared observer (its spawn box
        // is recycled at once): the failure must still be reported, a cancellation not, and the job
        // must count as completed either way.
        var reported = new System.Collections.Concurrent.ConcurrentQueue<Exception>();
        Runtime.UnobservedException += (_, e) => reported.Enqueue(e.Exception);
        var gates = new Promise<int>[20];
        long before = Runtime.CompletedCount;
        TestHelpers.OnThread(() =>
        {
            for (int i = 0; i < gates.Length; i++)
            {
                gates[i] = new Promise<int>();
                Runtime.SpawnDetached((gates[i].Job, cancel), static s => FailAfter(s.Job, s.cancel));
            }

            Runtime.Run(static () => Job.FromResult(0));
            if (Runtime is SingleThreadRuntime single)
            {
                single.RunUntilIdle();
            }

            foreach (Promise<int> gate in gates)
            {
                gate.SetResult(0);
            }

            if (Runtime is SingleThreadRuntime again)
            {
                again.RunUntilIdle();
            }

            // The Run above is a spawn too, and its completion may be counted after Run returned:
            // waiting for gates.Length alone could stop one detached job short of its report.
            Assert.True(SpinWait.SpinUntil(() => Runtime.CompletedCount - before >= gates.Length + 1, TimeSpan.FromSeconds(30)));
        });
        if (cancel)
        {
            Assert.Empty(reported);
        }
        else
        {
            Assert.Equal(gates.Length, reported.Count);
            Assert.All(reported, e => Assert.IsType<TimeZoneNotFoundException>(e));
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Detach_JobFailsAfterSuspending_ReportedUnlessCanceled(bool cancel)
    {
        var reported = new System.Collections.Concurrent.ConcurrentQueue<Exception>();
        Runtime.UnobservedException += (_, e) => reported.Enqueue(e.Exception);
        long spawnsBefore = Runtime.CompletedCount;
        var gates = new Promise<int>[20];
        for (int i = 0; i < gates.Length; i++)
        {
            gates[i] = new Promise<int>();
            Runtime.Detach(FailAfter(gates[i].Job, cancel)); // started directly, suspended on its gate
        }

        Assert.Empty(reported);
        foreach (Promise<int> gate in gates)
        {
            gate.SetResult(0); // resumes the job inline on this thread, and it fails
        }

        if (cancel)
        {
            Assert.Empty(reported);
        }
        else
        {
            Assert.Equal(gates.Length, reported.Count);
            Assert.All(reported, e => Assert.IsType<TimeZoneNotFoundException>(e));
        }

        Assert.Equal(spawnsBefore, Runtime.CompletedCount); // handed-over jobs are not spawns
    }

    [Fact]
    public void Detach_SelectWhoseHandlerThrows_ReportedAndNotThrownIntoTheSender()
    {
        Exception? seen = null;
        Runtime.UnobservedException += (_, e) => seen = e.Exception;
        Chan<int> ch = Chan.Unbuffered<int>();
        Runtime.Detach(Select.Receive(ch, static _ => throw new FormatException("from the handler")).AsJob());

        Assert.True(ch.TrySend(1)); // completes the select; its handler must not throw out of here

        Assert.True(SpinWait.SpinUntil(() => Volatile.Read(ref seen) is not null, TimeSpan.FromSeconds(30)));
        Assert.IsType<FormatException>(seen);
    }

    [Fact]
    public void Detach_AlreadyFailedJob_ReportsAtOnce()
    {
        Exception? seen = null;
        Runtime.UnobservedException += (_, e) => seen = e.Exception;
        Runtime.Detach(Job.FromException<int>(new DivideByZeroException("sync failure")));
        Assert.IsType<DivideByZeroException>(seen);
    }

    [Fact]
    public void Detach_CompletedJob_ReportsNothing()
    {
        int raised = 0;
        Runtime.UnobservedException += (_, _) => raised++;
        Runtime.Detach(Job.CompletedJob);
        Runtime.Detach(Job.FromResult(5));
        Assert.Equal(0, raised);
        Assert.Equal(0, Runtime.UnobservedExceptionCount);
    }

    [Fact]
    public void Detach_JobAlreadyAwaited_Throws()
    {
        var gate = new Promise<int>();
        Job job = FailAfter(gate.Job, cancel: true);
        Runtime.Detach(job);
        var error = Assert.Throws<InvalidOperationException>(() => Runtime.Detach(job));
        Assert.Contains("twice", error.Message);
        gate.SetResult(0);
    }

    private static readonly AsyncLocal<int> s_local = new();

    [Fact]
    public void Spawn_AsyncLocal_FlowsIntoSpawnedJob()
    {
        int seen = TestHelpers.OnThread(() =>
        {
            s_local.Value = 17;
            return Runtime.Spawn(0, static async _ =>
            {
                await Task.Yield();
                return s_local.Value;
            }).Wait();
        });
        Assert.Equal(17, seen);
    }

    [Fact]
    public void Spawn_AsyncLocalAndALiveToken_BothReachTheSpawnedJob()
    {
        // A cancelable token and a flowed context travel packed together until the body starts.
        using var cts = new CancellationTokenSource();
        (int Value, bool Canceled) seen = TestHelpers.OnThread(() =>
        {
            s_local.Value = 23;
            return Runtime.Spawn(cts.Token, static async token =>
            {
                await Task.Yield();
                return (s_local.Value, token.IsCancellationRequested);
            }, cts.Token).Wait();
        });
        Assert.Equal((23, false), seen);
    }

    [Fact]
    public void Spawn_AsyncLocalAndATokenCanceledBeforeStart_EndsCanceledWithoutRunning()
    {
        var ran = new StrongBox<int>();
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        OperationCanceledException canceled = TestHelpers.OnThread(() =>
        {
            s_local.Value = 29;
            Job job = Runtime.Spawn(ran, static r => Interlocked.Increment(ref r.Value), cts.Token);
            return Assert.ThrowsAny<OperationCanceledException>(() => job.Wait());
        });
        Assert.Equal(cts.Token, canceled.CancellationToken);
        Assert.Equal(0, ran.Value);
    }

    [Fact]
    public void SpawnDetached_AsyncLocalAndALiveToken_BodySeesTheSpawnersValue()
    {
        var seen = new StrongBox<int>();
        using var done = new ManualResetEventSlim();
        using var cts = new CancellationTokenSource();
        TestHelpers.OnThread(() =>
        {
            s_local.Value = 31;
            Runtime.SpawnDetached((seen, done), static async s =>
            {
                await Task.Yield();
                s.seen.Value = s_local.Value;
                s.done.Set();
            }, cts.Token);
            s_local.Value = 0;
            Settle();
            if (Runtime is SingleThreadRuntime single)
            {
                while (!done.IsSet)
                {
                    single.RunUntilIdle();
                    Thread.Sleep(1);
                }
            }

            Assert.True(done.Wait(TimeSpan.FromSeconds(30)));
        });
        Assert.Equal(31, seen.Value);
    }

    [Fact]
    public void TaskScheduler_RunsTasksOnRuntimeThreads()
    {
        bool onRuntime = TestHelpers.OnThread(() =>
        {
            JobRuntime runtime = Runtime;
            Task<bool> task = Task.Factory.StartNew(() => runtime.IsRuntimeThread, CancellationToken.None, TaskCreationOptions.None, runtime.TaskScheduler);
            if (runtime is SingleThreadRuntime single)
            {
                while (!task.IsCompleted)
                {
                    single.RunUntilIdle();
                    Thread.Yield();
                }
            }

            return task.Result;
        });
        Assert.True(onRuntime);
    }

    [Fact]
    public void AwaitTask_InsideSpawnedJob_ResumesOnTheRuntime()
    {
        bool onRuntime = TestHelpers.OnThread(() => Runtime.Run(Runtime, static async rt =>
        {
            await Task.Delay(10);
            return rt.IsRuntimeThread;
        }));
        Assert.True(onRuntime);
    }

    [Fact]
    public void Counters_TrackSpawnedAndCompletedJobs()
    {
        TestHelpers.OnThread(() =>
        {
            for (int i = 0; i < 10; i++)
            {
                Runtime.Spawn(i, static _ => { }).Wait();
            }
        });
        Assert.Equal(10, Runtime.SpawnedCount);
        Assert.Equal(10, Runtime.CompletedCount);
    }
}

public sealed class MultiThreadRuntimeContractTests : RuntimeContractTests
{
    protected override JobRuntime CreateRuntime() => new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
}

public sealed class CurrentThreadRuntimeContractTests : RuntimeContractTests
{
    protected override JobRuntime CreateRuntime() => new CurrentThreadRuntime();
}

public sealed class DeterministicRuntimeContractTests : RuntimeContractTests
{
    protected override JobRuntime CreateRuntime() => new DeterministicRuntime(seed: 12345);
}

internal sealed class StrongBox<T>
{
    public T Value = default!;
}
