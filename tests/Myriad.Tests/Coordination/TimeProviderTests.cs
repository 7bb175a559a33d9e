using System;
using System.Threading;
using Microsoft.Extensions.Time.Testing;
using Myriad.Channels;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Coordination;

/// <summary>Timers measured by an injected <see cref="TimeProvider"/> (a FakeTimeProvider the tests advance by hand).</summary>
public sealed class TimeProviderTests
{
    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(10);

    [Fact]
    public void Delay_WithFakeProvider_CompletesOnlyWhenTheFakeClockReachesIt()
    {
        var fake = new FakeTimeProvider();
        Job delay = Job.Delay(TimeSpan.FromSeconds(1), fake);

        Thread.Sleep(30); // real time does not count
        Assert.False(delay.IsCompleted);
        fake.Advance(TimeSpan.FromMilliseconds(999));
        Thread.Sleep(30);
        Assert.False(delay.IsCompleted);

        fake.Advance(TimeSpan.FromMilliseconds(1));
        Assert.True(SpinWait.SpinUntil(() => delay.IsCompleted, Settle));
        delay.GetAwaiter().GetResult();
    }

    [Fact]
    public void Delay_RuntimeWithFakeProvider_UsesTheRuntimesClockAndResumesOnTheRuntime()
    {
        var fake = new FakeTimeProvider();
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, TimeProvider = fake });
        Assert.Same(fake, runtime.TimeProvider);
        Job<bool> job = runtime.Spawn(async () =>
        {
            await Job.Delay(TimeSpan.FromHours(1));
            return runtime.IsRuntimeThread;
        });

        AwaitPendingTimers(fake, 1);
        Assert.False(job.IsCompleted);
        fake.Advance(TimeSpan.FromHours(1));
        Assert.True(TestHelpers.OnThread(() => job.Wait(), timeout: Settle));
    }

    [Fact]
    public void SelectTimeout_RuntimeWithFakeProvider_FiresWhenTheFakeClockAdvances()
    {
        var fake = new FakeTimeProvider();
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, TimeProvider = fake });
        var channel = Chan.Bounded<int>(1);
        Job<int> job = runtime.Spawn(async () => await Select.Receive(channel).Timeout(TimeSpan.FromMinutes(10)));

        AwaitPendingTimers(fake, 1);
        Assert.False(job.IsCompleted);
        fake.Advance(TimeSpan.FromMinutes(10));
        Assert.Equal(1, TestHelpers.OnThread(() => job.Wait(), timeout: Settle)); // case 1: the timeout
    }

    [Fact]
    public void Delay_FakeProviderCanceled_LeavesTheQueueAndThrowsOperationCanceled()
    {
        var fake = new FakeTimeProvider();
        using var cts = new CancellationTokenSource();
        Job delay = Job.Delay(TimeSpan.FromMinutes(1), fake, cts.Token);
        Assert.Equal(1, TimerQueue.For(fake).Count);

        cts.Cancel();

        Assert.Equal(0, TimerQueue.For(fake).Count);
        Assert.Throws<OperationCanceledException>(() => delay.GetAwaiter().GetResult());
        fake.Advance(TimeSpan.FromMinutes(2)); // nothing left to fire
    }

    [Fact]
    public void Delay_ManyFakeDeadlines_FireInDeadlineOrderAsTheClockPassesEach()
    {
        var fake = new FakeTimeProvider();
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, TimeProvider = fake });
        var jobs = new Job[10];
        for (int i = 0; i < jobs.Length; i++)
        {
            int seconds = i + 1;
            jobs[i] = runtime.Spawn(async () => await Job.Delay(TimeSpan.FromSeconds(seconds)));
        }

        AwaitPendingTimers(fake, jobs.Length); // every job has started its delay
        for (int i = 0; i < jobs.Length; i++)
        {
            fake.Advance(TimeSpan.FromSeconds(1));
            Job fired = jobs[i];
            Assert.True(SpinWait.SpinUntil(() => fired.IsCompleted, Settle), $"delay {i + 1} s did not fire");
            for (int later = i + 1; later < jobs.Length; later++)
            {
                Assert.False(jobs[later].IsCompleted, $"delay {later + 1} s fired at {i + 1} s");
            }
        }
    }

    [Fact]
    public void CurrentThreadRuntime_WithOptions_TakesTheirTimeProvider()
    {
        var fake = new FakeTimeProvider();
        using var runtime = new CurrentThreadRuntime(new RuntimeOptions { TimeProvider = fake, Name = "faked" });
        Assert.Same(fake, runtime.TimeProvider);
        Assert.Equal("faked", runtime.Name);
        Assert.Same(TimeProvider.System, new RuntimeOptions().TimeProvider);
    }

    [Fact]
    public void DeterministicRuntime_WithExplicitProvider_UsesItInsteadOfTheVirtualClock()
    {
        var fake = new FakeTimeProvider();
        using var runtime = new DeterministicRuntime(3, new RuntimeOptions { TimeProvider = fake });
        Assert.Same(fake, runtime.TimeProvider);
        using var plain = new DeterministicRuntime(3);
        Assert.NotSame(TimeProvider.System, plain.TimeProvider);
    }

    [Fact]
    public void Delay_BadProviderArguments_Throw()
    {
        Assert.Throws<ArgumentNullException>(() => Job.Delay(TimeSpan.FromSeconds(1), null!));
        Assert.Throws<ArgumentNullException>(() => new RuntimeOptions { TimeProvider = null! });
        Assert.Throws<ArgumentOutOfRangeException>(() => Job.Delay(TimeSpan.FromDays(60), new FakeTimeProvider()));
    }

    /// <summary>
    /// Waits until the jobs have put <paramref name="count"/> timers on the fake clock's queue: a
    /// clock advanced before a job scheduled its timer would leave that timer due an advance later,
    /// and a fixed sleep was not always long enough on a loaded machine.
    /// </summary>
    private static void AwaitPendingTimers(FakeTimeProvider fake, int count) =>
        Assert.True(SpinWait.SpinUntil(() => TimerQueue.For(fake).Count == count, Settle), $"{TimerQueue.For(fake).Count} of {count} timers were scheduled");

    [Fact]
    public void Delay_OnAClockCoarserThanAMillisecond_ArmsTheProvidersTimerAFewTimes()
    {
        // The provider's timer was armed for a timestamp rounded down, before the delay's
        // millisecond: it fired, found nothing due and was armed again for no time at all, tens of
        // thousands of times per delay until the clock ticked over.
        var clock = new Myriad.Tests.Support.CoarseTimeProvider();
        for (int i = 0; i < 3; i++)
        {
            Job.Delay(TimeSpan.FromMilliseconds(150), clock).Wait();
        }

        Assert.True(clock.Callbacks <= 30, $"{clock.Callbacks} timer callbacks for 3 delays");
    }
}
