using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Coordination;

public sealed class DelayTests
{
    [Fact]
    public void Delay_Zero_CompletesAtOnce()
    {
        Sync.Result(Job.Delay(TimeSpan.Zero));
        Sync.Result(Job.Delay(0));
    }

    [Fact]
    public void Delay_BadArguments_ThrowArgumentOutOfRange()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => Job.Delay(TimeSpan.FromMilliseconds(-2)));
        Assert.Throws<ArgumentOutOfRangeException>(() => Job.Delay(-2));
        Assert.Throws<ArgumentOutOfRangeException>(() => Job.Delay(TimeSpan.FromDays(60)));
    }

    [Fact]
    public void Delay_Positive_CompletesNoEarlierThanAsked()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        long elapsedMs = Bounded.Run(runtime, async () =>
        {
            var watch = Stopwatch.StartNew();
            await Job.Delay(TimeSpan.FromMilliseconds(30));
            return watch.ElapsedMilliseconds;
        });

        Assert.InRange(elapsedMs, 29, 10_000); // a millisecond of slack for the clocks' rounding
    }

    [Fact]
    public void Delay_Canceled_ThrowsOperationCanceled()
    {
        using var cts = new CancellationTokenSource();
        Job delay = Job.Delay(TimeSpan.FromMinutes(5), cts.Token);
        Assert.False(delay.IsCompleted);

        cts.Cancel();

        Assert.True(delay.IsCompleted);
        Assert.Throws<OperationCanceledException>(() => delay.GetAwaiter().GetResult());
    }

    [Fact]
    public void Delay_TokenAlreadyCanceled_CompletesCanceled()
    {
        Job delay = Job.Delay(10, new CancellationToken(canceled: true));
        Assert.Throws<OperationCanceledException>(() => delay.GetAwaiter().GetResult());
    }

    [Fact]
    public void Delay_Infinite_CompletesOnlyWhenCanceled()
    {
        using var cts = new CancellationTokenSource();
        Job delay = Job.Delay(Timeout.InfiniteTimeSpan, cts.Token);
        Assert.False(delay.IsCompleted);
        cts.Cancel();
        Assert.Throws<OperationCanceledException>(() => delay.GetAwaiter().GetResult());
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Delay_InfiniteOnDeterministicRuntime_IsReportedAsADeadlock(bool withToken)
    {
        // An infinite delay is on no clock: like a receive nobody sends to, only a job's cancel can
        // end it. The deadlock check took it for a delay on another clock and waited forever.
        using var runtime = new DeterministicRuntime(1, "forever");
        using var cts = new CancellationTokenSource();
        DeadlockException error = Assert.Throws<DeadlockException>(() => Bounded.Run(
            runtime,
            async () => await Job.Delay(Timeout.InfiniteTimeSpan, withToken ? cts.Token : default),
            TimeSpan.FromSeconds(10)));
        Assert.Contains("forever", error.Message);
        Assert.Contains("Job.Delay", error.Message);
    }

    [Fact]
    public void Delay_InfiniteCanceledByAnotherJob_IsNotADeadlock()
    {
        using var runtime = new DeterministicRuntime(2);
        using var cts = new CancellationTokenSource();
        bool canceled = Bounded.Run(runtime, async () =>
        {
            runtime.SpawnDetached(cts, static async c =>
            {
                await Job.Delay(TimeSpan.FromHours(1));
                c.Cancel(); // not CancelAsync: its callbacks run on the thread pool, outside the seed
            });
            try
            {
                await Job.Delay(Timeout.InfiniteTimeSpan, cts.Token);
                return false;
            }
            catch (OperationCanceledException)
            {
                return true;
            }
        });
        Assert.True(canceled);
        Assert.Equal(TimeSpan.FromHours(1), runtime.Now - new DateTimeOffset(2000, 1, 1, 0, 0, 0, TimeSpan.Zero));
    }

    [Theory]
    [MemberData(nameof(Runtimes.All), MemberType = typeof(Runtimes))]
    public void Delay_StartedOnRuntime_ResumesOnThatRuntime(string runtimeName)
    {
        using JobRuntime runtime = Runtimes.Create(runtimeName);
        bool onRuntime = Bounded.Run(runtime, async () =>
        {
            await Job.Delay(2);
            return runtime.IsRuntimeThread;
        });

        Assert.True(onRuntime);
    }

    [Fact]
    public void Delay_ManyDeadlines_FireInDeadlineOrder()
    {
        // On a current-thread runtime, continuations run in the order the timer thread queues them,
        // which is deadline order (the heap), whatever the order the delays were started in. Each
        // deadline is noted just before its delay starts: a pause between two starts (a GC, a busy
        // machine) moves deadlines, so the check is against the noted deadlines, with a millisecond
        // of slack for the moment between noting and starting.
        using var runtime = new CurrentThreadRuntime();
        var random = new Random(5);
        var fired = new List<long>();
        Bounded.Run(runtime, async () =>
        {
            await Fire(1, 0, []); // warm-up: the first delay pays for JIT and the timer thread's start
            var jobs = new List<Job>();
            foreach (int slot in Shuffled(random, 40))
            {
                int ms = 5 * (slot + 1);
                long deadline = Stopwatch.GetTimestamp() + (ms * Stopwatch.Frequency / 1000);
                jobs.Add(Fire(ms, deadline, fired));
            }

            await Job.WhenAll(jobs.ToArray());
        });

        long slack = Stopwatch.Frequency / 1000;
        for (int i = 1; i < fired.Count; i++)
        {
            Assert.True(fired[i - 1] <= fired[i] + slack, $"timer {i - 1} (deadline {fired[i - 1]}) fired before timer {i} (deadline {fired[i]})");
        }

        static async Job Fire(int ms, long deadline, List<long> fired)
        {
            await Job.Delay(ms);
            fired.Add(deadline);
        }
    }

    [Fact]
    public void Delay_HundredThousandTimers_AllFire()
    {
        const int N = 100_000;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        int fired = 0;
        Bounded.Run(runtime, async () =>
        {
            var random = new Random(11);
            var jobs = new Job[N];
            for (int i = 0; i < N; i++)
            {
                jobs[i] = Fire(random.Next(1, 200), () => Interlocked.Increment(ref fired));
            }

            await Job.WhenAll(jobs);
        });

        Assert.Equal(N, fired);

        static async Job Fire(int ms, Action onFired)
        {
            await Job.Delay(ms);
            onFired();
        }
    }

    [Fact]
    public void Delay_CanceledTimers_LeaveTheWheel()
    {
        // Thousands of long delays canceled right away must not linger until their deadline.
        using var cts = new CancellationTokenSource();
        var jobs = new Job[5_000];
        for (int i = 0; i < jobs.Length; i++)
        {
            jobs[i] = Job.Delay(TimeSpan.FromHours(1), cts.Token);
        }

        int pendingBefore = Myriad.Coordination.SystemTimerQueue.Instance.Count;
        cts.Cancel();
        int pendingAfter = Myriad.Coordination.SystemTimerQueue.Instance.Count;

        Assert.True(pendingBefore - pendingAfter >= jobs.Length - 100, $"{pendingBefore} -> {pendingAfter}"); // other tests' timers come and go
        foreach (Job job in jobs)
        {
            Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
        }
    }

    [Fact]
    public void Delay_NoToken_AllocatesNothingInSteadyState()
    {
        using var runtime = new CurrentThreadRuntime();
        long bytes = Bounded.Run(runtime, async () => await SteadyState.AllocatedBytesAsync(Loop, 20));
        Assert.Equal(0, bytes);

        static async Job Loop(int n)
        {
            for (int i = 0; i < n; i++)
            {
                await Job.Delay(1);
            }
        }
    }

    private static int[] Shuffled(Random random, int count)
    {
        int[] items = new int[count];
        for (int i = 0; i < count; i++)
        {
            items[i] = i;
        }

        random.Shuffle(items);
        return items;
    }
}
