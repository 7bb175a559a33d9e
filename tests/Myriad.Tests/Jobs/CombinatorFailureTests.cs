using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>WhenAll over sequences and every failure; WhenAll/WhenAny giving back the locks of results they drop.</summary>
public sealed class CombinatorFailureTests
{
    private static async Job<int> Pass(Job<int> source) => await source;

    private static async Job Untyped(Job<int> source) => await source;

    [Fact]
    public void WhenAll_Enumerable_SeveralFailures_FirstThrownAndAllReachable()
    {
        var jobs = new List<Job>
        {
            Job.FromException(new FormatException("a")),
            Job.CompletedJob,
            Job.FromException(new InvalidOperationException("b")),
        };
        var e = Assert.Throws<FormatException>(() => Job.WhenAll(jobs.Where(_ => true)).Wait());
        AggregateException all = Job.GetAllFailures(e);
        Assert.Equal(2, all.InnerExceptions.Count);
        Assert.Same(e, all.InnerExceptions[0]);
        Assert.IsType<InvalidOperationException>(all.InnerExceptions[1]);
    }

    [Fact]
    public void WhenAllT_Enumerable_AllSucceed_ResultsInOrder()
    {
        var promises = Enumerable.Range(0, 4).Select(_ => new Promise<int>()).ToArray();
        Job<int[]> all = Job.WhenAll(promises.Select(p => Pass(p.Job)));
        for (int i = promises.Length - 1; i >= 0; i--)
        {
            promises[i].SetResult(i * 10);
        }

        Assert.Equal([0, 10, 20, 30], Sync.Result(all));
    }

    [Fact]
    public void GetAllFailures_OrdinaryException_OneElementAggregate()
    {
        var e = new FormatException();
        Assert.Same(e, Assert.Single(Job.GetAllFailures(e).InnerExceptions));
        Assert.Throws<ArgumentNullException>(() => Job.GetAllFailures(null!));
    }

    [Fact]
    public void WhenAllT_FailureNextToAcquiredLock_LockGivenBack()
    {
        var mutex = new JobMutex();
        Job<JobMutex.Releaser> locked = mutex.LockAsync();
        Job<JobMutex.Releaser> failed = Job.FromException<JobMutex.Releaser>(new FormatException());
        Assert.Throws<FormatException>(() => Job.WhenAll(locked, failed).Wait());
        Assert.False(mutex.IsLocked);
    }

    [Fact]
    public void WhenAllT_FailureNextToPermit_PermitGivenBack()
    {
        var semaphore = new JobSemaphore(1, 1);
        Job<JobSemaphore.Releaser>[] jobs = [semaphore.AcquireAsync(), Job.FromException<JobSemaphore.Releaser>(new FormatException())];
        Assert.Throws<FormatException>(() => Job.WhenAll((IEnumerable<Job<JobSemaphore.Releaser>>)jobs).Wait());
        Assert.Equal(1, semaphore.CurrentCount);
    }

    [Fact]
    public void WhenAnyT_LosingAcquisition_LockGivenBack()
    {
        var mutex = new JobMutex();
        JobMutex.Releaser held = mutex.LockAsync().Wait();
        var timeout = new Promise<JobMutex.Releaser>();
        Job<(int Index, Job<JobMutex.Releaser> Winner)> race = Job.WhenAny(timeout.Job, mutex.LockAsync());
        timeout.SetResult(default); // the "timeout" wins while the lock is still held
        Assert.Equal(0, Sync.Result(race).Index);

        held.Dispose(); // the lock passes to the losing acquisition, which WhenAny disposes at once
        Assert.False(mutex.IsLocked);
    }

    [Fact]
    public void WhenAnyT_WinnerFails_NoThrowAndWinnerCarriesFailure()
    {
        var winner = new Promise<int>();
        var loser = new Promise<int>();
        Job<(int Index, Job<int> Winner)> race = Job.WhenAny(new[] { Pass(loser.Job), Pass(winner.Job) }.AsEnumerable());
        winner.SetException(new FormatException());
        (int index, Job<int> first) = Sync.Result(race);
        Assert.Equal(1, index);
        Assert.Throws<FormatException>(() => first.Wait());
        loser.SetResult(1);
    }

    [Fact]
    public void WhenAny_Enumerable_Empty_Throws()
    {
        Assert.Throws<ArgumentException>(() => Job.WhenAny(Enumerable.Empty<Job>()));
        Assert.Throws<ArgumentNullException>(() => Job.WhenAll((IEnumerable<Job>)null!));
    }

    [Theory]
    [InlineData("whenany")]
    [InlineData("waitasync")]
    public void LoserResult_WhoseDisposeThrows_RaisesUnobservedExceptionOfItsRuntime(string race)
    {
        // A result nobody receives is disposed; its Dispose threw on the thread pool, which ended
        // the process.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var reported = new Promise<Exception>();
        runtime.UnobservedException += (_, e) => reported.TrySetResult(e.Exception);
        var gate = new Promise<int>();
        Job<ThrowingDisposable> late = runtime.Spawn(gate, static async g => new ThrowingDisposable(await g.Job));
        if (race == "whenany")
        {
            Assert.Equal(0, Sync.Result(Job.WhenAny(Job.FromResult(new ThrowingDisposable(0)), late)).Index);
        }
        else
        {
            Assert.Throws<TimeoutException>(() => late.WaitAsync(TimeSpan.FromMilliseconds(1)).Wait());
        }

        gate.SetResult(7);
        Exception error = reported.Job.WaitAsync(TimeSpan.FromSeconds(30)).Wait();
        Assert.Equal("disposal of 7 failed", Assert.IsType<InvalidOperationException>(error).Message);
    }

    private sealed class ThrowingDisposable(int id) : IDisposable
    {
        public void Dispose()
        {
            if (id != 0)
            {
                throw new InvalidOperationException($"disposal of {id} failed");
            }
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void WhenAny_LoserFailsAfterTheRace_RaisesUnobservedExceptionOfItsRuntime(bool typed)
    {
        // WhenAny consumes every job it is given, so nobody can observe a loser's failure: it was
        // dropped without a trace.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var reported = new Promise<Exception>();
        runtime.UnobservedException += (_, e) => reported.TrySetResult(e.Exception);
        var loserGate = new Promise<int>();
        int winner = runtime.Run((runtime, loserGate, typed), static async s =>
        {
            Job<int> fast = s.runtime.Spawn(static () => Job.FromResult(1));
            Job<int> slow = s.runtime.Spawn(s.loserGate, static async g =>
            {
                int value = await g.Job;
                if (value == 0)
                {
                    throw new FormatException("the loser failed");
                }

                return value;
            });
            if (s.typed)
            {
                return (await Job.WhenAny(fast, slow)).Index;
            }

            return (await Job.WhenAny(fast.AsJob(), slow.AsJob())).Index;
        });

        Assert.Equal(0, winner);
        Assert.Equal(0, runtime.UnobservedExceptionCount);
        loserGate.SetResult(0);
        Assert.True(reported.Job.AsTask().Wait(TimeSpan.FromSeconds(30)), "the loser's failure was not reported");
        Assert.IsType<FormatException>(reported.Job.AsTask().Result);
        Assert.Equal(1, runtime.UnobservedExceptionCount);
    }

    [Fact]
    public void WhenAny_LoserCanceledAfterTheRace_ReportsNothing()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        int reported = 0;
        runtime.UnobservedException += (_, _) => Interlocked.Increment(ref reported);
        using var cancel = new CancellationTokenSource();
        runtime.Run((runtime, cancel.Token), static async s =>
        {
            Job<int> slow = s.runtime.Spawn(s.Item2, static async t =>
            {
                await Job.Delay(Timeout.InfiniteTimeSpan, t);
                return 0;
            });
            await Job.WhenAny(Job.FromResult(1), slow);
        });
        cancel.Cancel();
        Thread.Sleep(100);
        Assert.Equal(0, Volatile.Read(ref reported));
    }

    [Fact]
    public void WhenAny_LoserOfNoRuntimeFailsOutsideEveryRuntime_RaisesUnobservedTaskException()
    {
        // No runtime to raise UnobservedException on: the failure used to vanish. It goes where a
        // Task.WhenAny loser's would, when the garbage collector finalizes the faulted task.
        var failure = new FormatException("the loser of no runtime failed");
        int seen = 0;
        EventHandler<UnobservedTaskExceptionEventArgs> handler = (_, e) =>
        {
            if (e.Exception.InnerExceptions.Contains(failure))
            {
                Interlocked.Increment(ref seen);
                e.SetObserved();
            }
        };
        TaskScheduler.UnobservedTaskException += handler;
        try
        {
            TestHelpers.OnThread(() =>
            {
                var gate = new Promise<int>();
                int index = Job.WhenAny(Job.FromResult(1), FailLater(gate.Job, failure)).Wait().Index;
                Assert.Equal(0, index);
                gate.SetResult(0); // the loser fails now, on this thread of no runtime
            });
            for (int i = 0; i < 50 && Volatile.Read(ref seen) == 0; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
                Thread.Sleep(10);
            }

            Assert.Equal(1, Volatile.Read(ref seen));
        }
        finally
        {
            TaskScheduler.UnobservedTaskException -= handler;
        }

        static async Job<int> FailLater(Job<int> gate, Exception failure)
        {
            await gate;
            throw failure;
        }
    }
}
