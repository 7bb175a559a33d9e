using System;
using System.Collections.Generic;
using System.Threading;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Coordination;

public sealed class JobSemaphoreTests
{
    [Fact]
    public void Constructor_BadCounts_ThrowArgumentOutOfRange()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new JobSemaphore(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new JobSemaphore(3, 2));
        Assert.Throws<ArgumentOutOfRangeException>(() => new JobSemaphore(0, 0));
    }

    [Fact]
    public void AcquireAsync_PermitsFree_CompleteAtOnceUntilExhausted()
    {
        var semaphore = new JobSemaphore(2);
        JobSemaphore.Releaser a = Sync.Result(semaphore.AcquireAsync());
        Assert.True(semaphore.TryAcquire(out JobSemaphore.Releaser b));
        Assert.False(semaphore.TryAcquire(out _));
        Job<JobSemaphore.Releaser> waiting = semaphore.AcquireAsync();
        Assert.False(waiting.IsCompleted);

        a.Dispose();
        JobSemaphore.Releaser c = Sync.Result(waiting); // the permit went to the waiter, not to the pool
        Assert.Equal(0, semaphore.CurrentCount);
        b.Dispose();
        c.Dispose();
        Assert.Equal(2, semaphore.CurrentCount);
    }

    [Fact]
    public void Release_SeveralPermits_WakeWaitersInFifoOrder()
    {
        var semaphore = new JobSemaphore(0);
        var waits = new List<Job<JobSemaphore.Releaser>>();
        for (int i = 0; i < 4; i++)
        {
            waits.Add(semaphore.AcquireAsync());
        }

        semaphore.Release(3);

        Assert.True(waits[0].IsCompleted && waits[1].IsCompleted && waits[2].IsCompleted);
        Assert.False(waits[3].IsCompleted);
        Assert.Equal(0, semaphore.CurrentCount);
        semaphore.Release(2);
        Assert.True(waits[3].IsCompleted);
        Assert.Equal(1, semaphore.CurrentCount);
    }

    [Fact]
    public void Release_BeyondMaxCount_ThrowsSemaphoreFull()
    {
        var semaphore = new JobSemaphore(1, maxCount: 1);
        Assert.Throws<SemaphoreFullException>(() => semaphore.Release());
        Assert.Equal(1, semaphore.CurrentCount);
        Assert.Throws<ArgumentOutOfRangeException>(() => semaphore.Release(0));
    }

    [Fact]
    public void Release_BeyondMaxCountWithWaiters_ThrowsAndHandsNoPermitToThem()
    {
        var semaphore = new JobSemaphore(0, maxCount: 2);
        Job<JobSemaphore.Releaser> waiting = semaphore.AcquireAsync();

        // Three permits with none free exceed MaxCount, although one of them could go to the waiter.
        Assert.Throws<SemaphoreFullException>(() => semaphore.Release(3));
        Assert.False(waiting.IsCompleted, "a release that threw handed a permit to a waiter");
        Assert.Equal(0, semaphore.CurrentCount);

        semaphore.Release(2);
        Sync.Result(waiting).Dispose();
        Assert.Equal(2, semaphore.CurrentCount);
    }

    [Fact]
    public void Release_UpToMaxCountWithWaiters_HandsOffFirstAndFreesTheRest()
    {
        var semaphore = new JobSemaphore(0, maxCount: 2);
        Job<JobSemaphore.Releaser> first = semaphore.AcquireAsync();
        Job<JobSemaphore.Releaser> second = semaphore.AcquireAsync();

        semaphore.Release(2);
        Assert.True(first.IsCompleted && second.IsCompleted);
        Assert.Equal(0, semaphore.CurrentCount);
        Sync.Result(first).Dispose();
        Assert.Equal(1, semaphore.CurrentCount);
        Assert.Throws<SemaphoreFullException>(() => semaphore.Release(2));
        Assert.Equal(1, semaphore.CurrentCount);
        Sync.Result(second).Dispose();
        Assert.Equal(2, semaphore.CurrentCount);
    }

    [Fact]
    public void Releaser_DisposedTwice_AddsAPermitUntilFullThenThrows()
    {
        // The documented contract of a misuse nobody can detect without per-acquisition state: the
        // second dispose is an ordinary release of a permit that was not held.
        var semaphore = new JobSemaphore(2, maxCount: 2);
        JobSemaphore.Releaser a = Sync.Result(semaphore.AcquireAsync());
        JobSemaphore.Releaser b = Sync.Result(semaphore.AcquireAsync());
        a.Dispose();
        a.Dispose();
        Assert.Equal(2, semaphore.CurrentCount); // b still holds a permit, yet two are free

        Assert.Throws<SemaphoreFullException>(() => b.Dispose());
        Assert.Equal(2, semaphore.CurrentCount);
    }

    [Fact]
    public void AcquireAsync_CanceledWhileWaiting_TakesNoPermit()
    {
        var semaphore = new JobSemaphore(0);
        using var cts = new CancellationTokenSource();
        Job<JobSemaphore.Releaser> canceled = semaphore.AcquireAsync(cts.Token);
        cts.Cancel();

        Assert.Throws<OperationCanceledException>(() => canceled.GetAwaiter().GetResult());
        semaphore.Release();
        Assert.Equal(1, semaphore.CurrentCount);
    }

    [Theory]
    [MemberData(nameof(Runtimes.All), MemberType = typeof(Runtimes))]
    public void AcquireAsync_ManyJobs_NeverMoreHoldersThanPermits(string runtimeName)
    {
        using JobRuntime runtime = Runtimes.Create(runtimeName);
        var state = new Gate();
        Bounded.Run(runtime, async () =>
        {
            var jobs = new Job[16];
            for (int j = 0; j < jobs.Length; j++)
            {
                jobs[j] = runtime.Spawn(state, static async s =>
                {
                    for (int i = 0; i < 50; i++)
                    {
                        using (await s.Semaphore.AcquireAsync())
                        {
                            int inside = Interlocked.Increment(ref s.Inside);
                            Tally.RaiseTo(ref s.MaxInside, inside);
                            await Job.Delay(1); // holders overlap: the other jobs queue meanwhile
                            Interlocked.Decrement(ref s.Inside);
                        }
                    }
                });
            }

            await Job.WhenAll(jobs);
        });

        Assert.Equal(3, state.MaxInside); // saturated, never exceeded
        Assert.Equal(3, state.Semaphore.CurrentCount);
    }

    [Fact]
    public void WaitAsync_ThenRelease_LimitsAsSemaphoreSlimDoes()
    {
        var semaphore = new JobSemaphore(1);
        Job first = semaphore.WaitAsync();
        Assert.True(first.IsCompletedSuccessfully);
        Job second = semaphore.WaitAsync();
        Assert.False(second.IsCompleted);
        Assert.Equal(0, semaphore.CurrentCount);

        semaphore.Release(); // the first holder's permit goes to the second waiter
        second.Wait();
        Assert.Equal(0, semaphore.CurrentCount);
        semaphore.Release();
        Assert.Equal(1, semaphore.CurrentCount);
    }

    [Fact]
    public void WaitAsyncWithTimeout_FreeZeroOrLate_TrueAtOnceOrFalse()
    {
        var semaphore = new JobSemaphore(1);
        Assert.True(semaphore.WaitAsync(TimeSpan.Zero).Wait());
        Assert.False(semaphore.WaitAsync(TimeSpan.Zero).Wait());
        Assert.False(semaphore.WaitAsync(TimeSpan.FromMilliseconds(20)).Wait()); // times out and leaves the queue

        semaphore.Release();
        Assert.Equal(1, semaphore.CurrentCount);
        Assert.True(semaphore.WaitAsync(TimeSpan.FromSeconds(30)).Wait());
        Assert.Equal(0, semaphore.CurrentCount);

        Assert.Throws<ArgumentOutOfRangeException>(() => semaphore.WaitAsync(TimeSpan.FromMilliseconds(-5)));
        Assert.ThrowsAny<OperationCanceledException>(() => semaphore.WaitAsync(TimeSpan.FromSeconds(1), new CancellationToken(canceled: true)).Wait());
    }

    [Fact]
    public void WaitAsyncWithTimeout_OnDeterministicRuntime_TimesOutInVirtualTime()
    {
        using var runtime = new DeterministicRuntime(3);
        var semaphore = new JobSemaphore(0);
        DateTimeOffset start = runtime.Now;
        (bool got, TimeSpan waited) = Bounded.Run(runtime, async () =>
        {
            bool got = await semaphore.WaitAsync(TimeSpan.FromMinutes(5));
            return (got, runtime.Now - start);
        });

        Assert.False(got);
        Assert.Equal(TimeSpan.FromMinutes(5), waited);
    }

    [Fact]
    public void WaitAsyncWithTimeout_CallerTokenCanceledFirst_ThrowsWithCallersToken()
    {
        // As SemaphoreSlim.WaitAsync(timeout, token): the exception names the caller's token, so a
        // `catch (OperationCanceledException e) when (e.CancellationToken == token)` matches; the
        // internal source that also carries the timeout must not show through.
        using var runtime = new DeterministicRuntime(7);
        var semaphore = new JobSemaphore(0);
        using var cts = new CancellationTokenSource();
        OperationCanceledException caught = Bounded.Run(runtime, async () =>
        {
            Job<bool> wait = semaphore.WaitAsync(TimeSpan.FromMinutes(5), cts.Token);
            await Job.Delay(TimeSpan.FromSeconds(1));
            cts.Cancel();
            try
            {
                await wait;
                throw new InvalidOperationException("the wait ended without a cancel");
            }
            catch (OperationCanceledException e)
            {
                return e;
            }
        });

        Assert.Equal(cts.Token, caught.CancellationToken);
        Assert.Equal(0, semaphore.CurrentCount);
    }

    [Fact]
    public void WaitAsyncWithTimeout_TimesOutBeforeCallerCancels_ReturnsFalse()
    {
        using var runtime = new DeterministicRuntime(8);
        var semaphore = new JobSemaphore(0);
        using var cts = new CancellationTokenSource();
        bool got = Bounded.Run(runtime, async () =>
        {
            bool got = await semaphore.WaitAsync(TimeSpan.FromSeconds(1), cts.Token);
            cts.Cancel(); // after the timeout: changes nothing
            return got;
        });

        Assert.False(got);
    }

    [Fact]
    public void WaitAsyncWithTimeout_RetryLoopTimesOut_LeavesNoWaiterBehind()
    {
        // A wait that timed out must leave the queue, as SemaphoreSlim's does: a "try for 10 ms, then
        // retry" loop would otherwise leave one stale waiter per try, each holding memory and each
        // taking the next permit before the live waiter gets it.
        using var runtime = new DeterministicRuntime(5);
        var semaphore = new JobSemaphore(0);
        bool liveWaiterServedAtOnce = Bounded.Run(runtime, async () =>
        {
            for (int i = 0; i < 100; i++)
            {
                Assert.False(await semaphore.WaitAsync(TimeSpan.FromMilliseconds(10)));
            }

            Job<JobSemaphore.Releaser> live = semaphore.AcquireAsync();
            semaphore.Release();
            bool served = live.IsCompleted; // the permit went to the live waiter, the only one queued
            await live; // the releaser is dropped: the permit stays taken
            return served;
        });

        Assert.True(liveWaiterServedAtOnce);
        Assert.Equal(0, semaphore.CurrentCount);
    }

    private sealed class Gate
    {
        public readonly JobSemaphore Semaphore = new(3);
        public int Inside;
        public int MaxInside;
    }
}
