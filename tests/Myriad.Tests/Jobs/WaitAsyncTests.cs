using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Time.Testing;
using Myriad.Channels;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary><see cref="Job{T}.WaitAsync(TimeSpan, CancellationToken)"/> and its overloads: a bounded wait for a job, as <c>Task.WaitAsync</c>.</summary>
public sealed class WaitAsyncTests
{
    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(30);

    private static async Job<int> AfterGate(Job<int> gate) => await gate + 1;

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void WaitAsync_ChainOfWaitsOnWaits_CompletesWithoutOverflowingTheStack(bool byToken)
    {
        // Each wait's promise is observed by the next wait, and observers were told inline: the
        // completion of the first promise nested one call per link and overflowed the stack (a
        // crash of the process) at about 20,000 links, at 1,000 on a 256 KiB stack.
        using var cts = new CancellationTokenSource();
        int result = TestHelpers.OnThread(
            () =>
            {
                var root = new Promise<int>();
                Job<int> job = root.Job;
                for (int i = 0; i < 50_000; i++)
                {
                    job = byToken ? job.WaitAsync(cts.Token) : job.WaitAsync(TimeSpan.FromMinutes(5));
                }

                root.SetResult(42);
                return job.Wait();
            },
            stackSize: 256 * 1024);
        Assert.Equal(42, result);
    }

    [Fact]
    public void WaitAsync_CompletedJob_ReturnsItAsItIs()
    {
        Job<int> done = Job.FromResult(5);
        Assert.Equal(5, done.WaitAsync(TimeSpan.Zero).Wait());
        Job<int> waited = AfterGate(Job.FromResult(1)).WaitAsync(TimeSpan.FromSeconds(1), new CancellationToken(canceled: true));
        Assert.True(waited.IsCompletedSuccessfully); // completed wins over a canceled token, as for a Task
        Assert.Equal(2, waited.Wait());
    }

    [Fact]
    public void WaitAsync_JobFinishesFirst_GivesItsResultAndFreesTheTimer()
    {
        var clock = new FakeTimeProvider();
        var gate = new Promise<int>();
        Job<int> waited = AfterGate(gate.Job).WaitAsync(TimeSpan.FromMinutes(1), clock);
        Assert.Equal(1, TimerQueue.For(clock).Count);
        Assert.False(waited.IsCompleted);

        gate.SetResult(41);

        Assert.Equal(42, waited.Wait());
        Assert.Equal(0, TimerQueue.For(clock).Count); // the timer left the wheel when the job won
        clock.Advance(TimeSpan.FromMinutes(2));
    }

    [Fact]
    public void WaitAsync_TimeoutFirst_ThrowsTimeoutAndALaterFailureIsReportedUnobserved()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var reported = new Promise<Exception>();
        runtime.UnobservedException += (_, e) => reported.TrySetResult(e.Exception);
        var gate = new Promise<int>();

        Exception error = Bounded.Run(runtime, async () =>
        {
            Job<int> slow = runtime.Spawn(gate, static async g => await g.Job == 0 ? throw new FormatException("too late") : 1);
            try
            {
                await slow.WaitAsync(TimeSpan.FromMilliseconds(20));
                return (Exception)new InvalidOperationException("no timeout");
            }
            catch (Exception e)
            {
                return e;
            }
        });

        Assert.IsType<TimeoutException>(error);
        Assert.Equal(0, runtime.UnobservedExceptionCount);
        gate.SetResult(0);
        Assert.True(reported.Job.AsTask().Wait(Settle), "the late failure was not reported");
        Assert.IsType<FormatException>(reported.Job.AsTask().Result);
    }

    [Fact]
    public void WaitAsync_TokenFirst_ThrowsOperationCanceledWithThatToken()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var source = new CancellationTokenSource();
        var gate = new Promise<int>();
        Job<int> waited = runtime.Spawn((gate, source.Token), static s => AfterGate(s.gate.Job).WaitAsync(s.Token));
        Assert.False(waited.IsCompleted);

        source.Cancel();

        OperationCanceledException canceled = Assert.ThrowsAny<OperationCanceledException>(() => TestHelpers.OnThread(() => waited.Wait(), timeout: Settle));
        Assert.Equal(source.Token, canceled.CancellationToken);
        gate.SetResult(1); // the job runs on and ends; its result has nobody to go to
    }

    [Fact]
    public void WaitAsync_PendingJobAndCanceledTokenOrZeroTimeout_EndsAtOnce()
    {
        var gate = new Promise<int>();
        Job<int> canceled = AfterGate(gate.Job).WaitAsync(new CancellationToken(canceled: true));
        Assert.True(canceled.IsCanceled);
        Assert.ThrowsAny<OperationCanceledException>(() => canceled.Wait());

        Job<int> timedOut = AfterGate(new Promise<int>().Job).WaitAsync(TimeSpan.Zero);
        Assert.True(timedOut.IsFaulted);
        Assert.Throws<TimeoutException>(() => timedOut.Wait());
    }

    [Fact]
    public void WaitAsync_LockAcquiredAfterTheTimeout_GivesTheLockBack()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var mutex = new JobMutex();
        JobMutex.Releaser held = mutex.LockAsync().Wait();

        Type error = Bounded.Run(runtime, async () =>
        {
            try
            {
                using (await mutex.LockAsync().WaitAsync(TimeSpan.FromMilliseconds(20)))
                {
                    return typeof(void);
                }
            }
            catch (Exception e)
            {
                return e.GetType();
            }
        });

        Assert.Equal(typeof(TimeoutException), error);
        held.Dispose(); // hands the lock to the timed-out acquisition, which disposes it at once
        Job<JobMutex.Releaser> again = mutex.LockAsync().WaitAsync(Settle);
        using (TestHelpers.OnThread(() => again.Wait(), timeout: Settle))
        {
        }
    }

    [Fact]
    public void WaitAsync_OnDeterministicRuntime_TimesOutInVirtualTime()
    {
        using var runtime = new DeterministicRuntime(7);
        DateTimeOffset start = runtime.Now;
        TimeSpan elapsed = Bounded.Run(runtime, async () =>
        {
            try
            {
                await AfterGate(new Promise<int>().Job).WaitAsync(TimeSpan.FromHours(2));
            }
            catch (TimeoutException)
            {
            }

            return runtime.Now - start;
        });

        Assert.Equal(TimeSpan.FromHours(2), elapsed);
    }

    [Fact]
    public async Task WaitAsync_FromTaskCode_ResumesOffTheRuntime()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Job waited = runtime.Spawn(static async () => await Job.Delay(10)).WaitAsync(Settle);
        await waited;
        Assert.False(runtime.IsRuntimeThread);
    }

    [Fact]
    public void WaitAsync_BadInput_ThrowsAtTheCall()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => AfterGate(new Promise<int>().Job).WaitAsync(TimeSpan.FromMilliseconds(-2)));
        Assert.Throws<ArgumentNullException>(() => AfterGate(new Promise<int>().Job).WaitAsync(TimeSpan.FromSeconds(1), (TimeProvider)null!));

        var gate = new Promise<int>();
        Job<int> consumed = AfterGate(gate.Job);
        gate.SetResult(1);
        Assert.Equal(2, consumed.Wait());
        Assert.Contains("consumed", Assert.Throws<InvalidOperationException>(() => consumed.WaitAsync(TimeSpan.FromSeconds(1))).Message);
    }

    [Fact]
    public void WaitAsync_RuntimeDisposedWhileWaiting_EndsWhenItsJobIsAbandoned()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var gate = new Promise<int>();
        using var source = new CancellationTokenSource();
        Job<int> waited = runtime.Run((gate, source.Token), static s => Job.FromResult(AfterGate(s.gate.Job).WaitAsync(TimeSpan.FromHours(1), s.Token)));
        Assert.False(waited.IsCompleted);

        runtime.Dispose();
        gate.SetResult(1); // wakes the job after the disposal: abandoned, it ends canceled

        Assert.ThrowsAny<OperationCanceledException>(() => TestHelpers.OnThread(() => waited.Wait(), timeout: Settle));
    }

    [Fact]
    public void WaitAsync_OnAQueuedSpawnFromItsOwnRuntime_DoesNotRunItInline()
    {
        // Awaiting a spawned job that has not started runs it on the awaiting worker (join helping);
        // WaitAsync must not, or its timeout would start only once the job had run.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var started = new StrongBox<bool>();
        bool startedDuringTheCall = Bounded.Run(runtime, async () =>
        {
            await Task.Yield(); // onto the one worker (Run may start the body on the calling thread)
            Assert.True(runtime.IsRuntimeThread);
            Job<int> queued = runtime.Spawn(started, static s => { s.Value = true; return Job.FromResult(1); });
            Job<int> waited = queued.WaitAsync(TimeSpan.FromMinutes(1));
            bool during = started.Value; // the one worker runs this job, so nobody else can have started it
            Assert.Equal(1, await waited);
            return during;
        });

        Assert.False(startedDuringTheCall);
        Assert.True(started.Value);
    }

    [Fact]
    public void WaitAsync_OnCurrentThreadRuntime_TimesOut()
    {
        using var runtime = new CurrentThreadRuntime();
        Type error = Bounded.Run(runtime, async () =>
        {
            try
            {
                await AfterGate(new Promise<int>().Job).WaitAsync(TimeSpan.FromMilliseconds(20));
                return typeof(void);
            }
            catch (Exception e)
            {
                return e.GetType();
            }
        });

        Assert.Equal(typeof(TimeoutException), error);
    }

    [Fact]
    public void WaitAsync_UntypedJob_TimesOutOrCompletes()
    {
        var gate = new Promise<int>();
        Job untyped = new Promise<int>().Job.AsJob();
        Assert.Throws<TimeoutException>(() => untyped.WaitAsync(TimeSpan.Zero).Wait());

        Job pending = AfterGate(gate.Job).AsJob().WaitAsync(TimeSpan.FromMinutes(1), new FakeTimeProvider());
        gate.SetResult(1);
        pending.Wait();

        using var source = new CancellationTokenSource();
        Job canceled = new Promise<int>().Job.AsJob().WaitAsync(source.Token);
        source.Cancel();
        Assert.True(canceled.IsCanceled);
    }

    [Fact]
    public void WaitAsync_LateOutcomesOfNoRuntime_FailureReportedCancellationNot()
    {
        var failure = new FormatException("late failure of no runtime");
        var cancellation = new OperationCanceledException("late cancellation of no runtime");
        int failures = 0, cancellations = 0;
        EventHandler<UnobservedTaskExceptionEventArgs> handler = (_, e) =>
        {
            if (e.Exception.InnerExceptions.Contains(failure))
            {
                Interlocked.Increment(ref failures);
                e.SetObserved();
            }
            else if (e.Exception.InnerExceptions.Contains(cancellation))
            {
                Interlocked.Increment(ref cancellations);
                e.SetObserved();
            }
        };
        TaskScheduler.UnobservedTaskException += handler;
        try
        {
            TestHelpers.OnThread(() =>
            {
                foreach (Exception late in new Exception[] { failure, cancellation })
                {
                    var gate = new Promise<int>();
                    Assert.Throws<TimeoutException>(() => AfterGate(gate.Job).WaitAsync(TimeSpan.Zero).Wait());
                    gate.SetException(late); // the loser ends now, on this thread of no runtime
                }
            });
            for (int i = 0; i < 50 && Volatile.Read(ref failures) == 0; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
                Thread.Sleep(10);
            }

            Assert.Equal(1, Volatile.Read(ref failures));
            Assert.Equal(0, Volatile.Read(ref cancellations));
        }
        finally
        {
            TaskScheduler.UnobservedTaskException -= handler;
        }
    }

    [Fact]
    public void WaitAsync_OfASelect_RunsTheHandlerOnTheRuntimeNotWhereTheSendCompletesIt()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var channel = Chan.Unbuffered<int>();
        var handlerOnRuntime = new StrongBox<bool?>();
        Job<int> waited = runtime.Run((channel, handlerOnRuntime, runtime), static s => Job.FromResult(
            Select.Receive(s.channel, s, static (st, _) => st.handlerOnRuntime.Value = st.runtime.IsRuntimeThread)
                  .AsJob()
                  .WaitAsync(TimeSpan.FromMinutes(1))));

        TestHelpers.OnThread(() => channel.SendAsync(1).Wait(), timeout: Settle); // a plain thread completes the select
        Assert.Equal(0, TestHelpers.OnThread(() => waited.Wait(), timeout: Settle));
        Assert.True(handlerOnRuntime.Value);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void LosingAcquisitions_ThousandsQueuedOnOneMutex_GiveTheLockBackWithoutDeepStacks(bool whenAny)
    {
        // Each loser's releaser is disposed when its acquisition finally succeeds, which hands the
        // lock to the next loser, whose disposal hands it on: inline, that nested once per loser and
        // overflowed a 1 MB stack after about 2,000 of them.
        const int Losers = 20_000;
        var mutex = new JobMutex();
        Assert.True(mutex.TryLock(out JobMutex.Releaser held));
        for (int i = 0; i < Losers; i++)
        {
            if (whenAny)
            {
                Assert.Equal(1, Job.WhenAny(mutex.LockAsync(), Job.FromResult(default(JobMutex.Releaser))).Wait().Index);
            }
            else
            {
                Assert.Throws<TimeoutException>(() => mutex.LockAsync().WaitAsync(TimeSpan.Zero).Wait());
            }
        }

        TestHelpers.OnThread(() => held.Dispose(), stackSize: 1 << 20, timeout: Settle);
        Assert.False(mutex.IsLocked);
    }
}
