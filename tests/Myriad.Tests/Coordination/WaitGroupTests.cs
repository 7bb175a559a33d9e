using System;
using System.Threading;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Coordination;

public sealed class WaitGroupTests
{
    [Fact]
    public void WaitAsync_CounterZero_CompletesAtOnce()
    {
        var group = new WaitGroup();
        Sync.Result(group.WaitAsync());
        Assert.Equal(0, group.Count);
    }

    [Fact]
    public void WaitAsync_CounterPositive_CompletesWhenLastDone()
    {
        var group = new WaitGroup();
        group.Add(2);
        Job wait = group.WaitAsync();
        Job other = group.WaitAsync();

        group.Done();
        Assert.False(wait.IsCompleted);
        group.Done();

        Sync.Result(wait);
        Sync.Result(other);
    }

    [Fact]
    public void Done_MoreThanAdded_ThrowsAndKeepsCounter()
    {
        var group = new WaitGroup();
        group.Add(1);
        group.Done();

        Assert.Throws<InvalidOperationException>(() => group.Done());
        Assert.Throws<InvalidOperationException>(() => group.Add(-5));
        Assert.Equal(0, group.Count);
    }

    [Fact]
    public void Add_NegativeBeyondTheCount_MessageNamesTheAddNotDone()
    {
        var group = new WaitGroup();
        group.Add(2);
        var done = Assert.Throws<InvalidOperationException>(() => group.Add(-5));
        Assert.Contains("Add(-5)", done.Message);
        Assert.DoesNotContain("Done was called", done.Message);
        Assert.Equal(2, group.Count);

        group.Add(-2);
        Assert.Contains("Done was called", Assert.Throws<InvalidOperationException>(() => group.Done()).Message);
        Assert.Contains("Add(-1)", Assert.Throws<InvalidOperationException>(() => group.Add(-1)).Message); // not a Done
    }

    [Fact]
    public void WaitAsync_Canceled_OtherWaitersStillReleased()
    {
        var group = new WaitGroup();
        group.Add();
        using var cts = new CancellationTokenSource();
        Job canceled = group.WaitAsync(cts.Token);
        Job kept = group.WaitAsync();

        cts.Cancel();
        Assert.Throws<OperationCanceledException>(() => canceled.GetAwaiter().GetResult());
        Assert.False(kept.IsCompleted);
        group.Done();
        Sync.Result(kept);
    }

    [Theory]
    [MemberData(nameof(Runtimes.All), MemberType = typeof(Runtimes))]
    public void WaitAsync_ManyJobs_CompletesAfterAllDone(string runtimeName)
    {
        using JobRuntime runtime = Runtimes.Create(runtimeName);
        int finished = 0;
        Bounded.Run(runtime, async () =>
        {
            var group = new WaitGroup();
            for (int i = 0; i < 1_000; i++)
            {
                group.Add();
                runtime.SpawnDetached(group, async g =>
                {
                    await Job.Delay(1);
                    Interlocked.Increment(ref finished);
                    g.Done();
                });
            }

            await group.WaitAsync();
            Assert.Equal(1_000, Volatile.Read(ref finished));
        });
    }

    [Fact]
    public void Done_HundredThousandWaiters_AllReleasedWithoutStackOverflow()
    {
        const int N = 100_000;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        int released = 0;
        Bounded.Run(runtime, async () =>
        {
            var group = new WaitGroup();
            group.Add();
            var waiters = new Job[N];
            for (int i = 0; i < N; i++)
            {
                waiters[i] = Wait(group, () => Interlocked.Increment(ref released));
            }

            group.Done();
            await Job.WhenAll(waiters);
        });

        Assert.Equal(N, released);

        static async Job Wait(WaitGroup group, Action onReleased)
        {
            await group.WaitAsync();
            onReleased();
        }
    }
}
