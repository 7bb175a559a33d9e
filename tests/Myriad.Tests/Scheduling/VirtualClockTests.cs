using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>The virtual clock of <see cref="DeterministicRuntime"/>: time jumps to the next timer whenever nothing can run.</summary>
public sealed class VirtualClockTests
{
    /// <summary>
    /// Far below the hour of virtual time the tests sleep through, and far above what they take on a
    /// loaded machine: a clock that waited in real time would blow it by orders of magnitude.
    /// </summary>
    private static readonly TimeSpan RealTimeBound = TimeSpan.FromSeconds(5);

    [Fact]
    public void Delay_OneHour_CompletesAtOnceAndMovesNowByOneHour()
    {
        using var runtime = new DeterministicRuntime(1);
        DateTimeOffset start = runtime.Now;
        var watch = Stopwatch.StartNew();
        TimeSpan moved = Bounded.Run(runtime, async () =>
        {
            await Job.Delay(TimeSpan.FromHours(1));
            return runtime.Now - start;
        });

        Assert.Equal(TimeSpan.FromHours(1), moved);
        Assert.True(watch.Elapsed < RealTimeBound, $"an hour of virtual delay took {watch.Elapsed} of real time");
    }

    [Fact]
    public void Delay_AnHourOfSmallDelaysInManyJobs_TakesNoRealTime()
    {
        using var runtime = new DeterministicRuntime(2);
        DateTimeOffset start = runtime.Now;
        var watch = Stopwatch.StartNew();
        Bounded.Run(runtime, async () =>
        {
            var jobs = new Job[10];
            for (int j = 0; j < jobs.Length; j++)
            {
                jobs[j] = runtime.Spawn(static async () =>
                {
                    for (int i = 0; i < 360; i++)
                    {
                        await Job.Delay(TimeSpan.FromSeconds(10));
                    }
                });
            }

            await Job.WhenAll(jobs);
        });

        Assert.Equal(TimeSpan.FromHours(1), runtime.Now - start);
        Assert.True(watch.Elapsed < RealTimeBound, $"an hour of virtual delays took {watch.Elapsed} of real time");
    }

    [Fact]
    public void Run_AJobPollsWithYieldsForWhatATimerBrings_ClockMovesAndTheRunEnds()
    {
        // The clock moved only when nothing could run, and a poller always can: the run spun forever.
        // After MyriadDefaults.BusyClockSteps steps at one instant the clock moves to the next timer,
        // at a step the schedule picks, so the run still replays from its seed.
        (long steps, long polls) Poll(int seed)
        {
            using var runtime = new DeterministicRuntime(seed);
            var done = new StrongBox<bool>();
            long polls = Bounded.Run(runtime, async () =>
            {
                runtime.SpawnDetached(done, static async d =>
                {
                    await Job.Delay(TimeSpan.FromMilliseconds(10));
                    d.Value = true;
                });

                long polls = 0;
                while (!done.Value)
                {
                    polls++;
                    await Task.Yield();
                }

                return polls;
            }, TimeSpan.FromSeconds(120));
            return (runtime.Steps, polls);
        }

        (long steps, long polls) first = Poll(3);
        Assert.InRange(first.polls, Myriad.Internal.MyriadDefaults.BusyClockSteps / 4, long.MaxValue);
        Assert.Equal(first, Poll(3));
    }

    [Fact]
    public void Now_BeforeAnyTimer_IsTheVirtualEpochAndStandsStill()
    {
        using var runtime = new DeterministicRuntime(4);
        Assert.Equal(new DateTimeOffset(2000, 1, 1, 0, 0, 0, TimeSpan.Zero), runtime.Now);
        Thread.Sleep(20);
        Assert.Equal(new DateTimeOffset(2000, 1, 1, 0, 0, 0, TimeSpan.Zero), runtime.Now);
        Assert.Equal(0, runtime.TimeProvider.GetTimestamp());
    }

    [Fact]
    public void SelectTimeout_OnDeterministicRuntime_FiresAtOnceInVirtualTime()
    {
        using var runtime = new DeterministicRuntime(5);
        var channel = Chan.Bounded<int>(1);
        DateTimeOffset start = runtime.Now;
        int chosen = Bounded.Run(runtime, async () => await Select.Receive(channel).Timeout(TimeSpan.FromDays(1)));
        Assert.Equal(1, chosen);
        Assert.Equal(TimeSpan.FromDays(1), runtime.Now - start);
    }

    [Fact]
    public void Delay_CanceledBeforeItsVirtualDueTime_DoesNotMoveTheClock()
    {
        using var runtime = new DeterministicRuntime(6);
        DateTimeOffset start = runtime.Now;
        Bounded.Run(runtime, async () =>
        {
            using var cts = new CancellationTokenSource();
            Job longDelay = Job.Delay(TimeSpan.FromDays(3), cts.Token);
            await Job.Delay(TimeSpan.FromMinutes(1));
            cts.Cancel();
            await Assert.ThrowsAsync<OperationCanceledException>(async () => await longDelay);
        });

        Assert.Equal(TimeSpan.FromMinutes(1), runtime.Now - start);
    }

    [Fact]
    public void SameInstantTimers_SameSeed_FireInTheSameOrderEveryRun()
    {
        int[] first = FiringOrder(seed: 42);
        for (int run = 1; run < 20; run++)
        {
            Assert.Equal(first, FiringOrder(seed: 42));
        }
    }

    [Fact]
    public void SameInstantTimers_DifferentSeeds_FireInDifferentOrders()
    {
        var orders = new HashSet<string>();
        for (int seed = 0; seed < 20; seed++)
        {
            orders.Add(string.Join(",", FiringOrder(seed)));
        }

        Assert.True(orders.Count >= 10, $"20 seeds gave only {orders.Count} orders");
    }

    [Fact]
    public void CreateTimer_VirtualPeriodicTimer_TicksOnVirtualTimeOnTheRuntime()
    {
        using var runtime = new DeterministicRuntime(8);
        DateTimeOffset start = runtime.Now;
        var ticks = new List<TimeSpan>();
        Bounded.Run(runtime, async () =>
        {
            var done = new Promise<bool>();
            ITimer? timer = null;
            timer = runtime.TimeProvider.CreateTimer(
                _ =>
                {
                    Assert.True(runtime.IsRuntimeThread);
                    ticks.Add(runtime.Now - start);
                    if (ticks.Count == 5)
                    {
                        timer!.Dispose();
                        done.TrySetResult(true);
                    }
                },
                null,
                TimeSpan.FromSeconds(2),
                TimeSpan.FromSeconds(1));
            await done.Job;
            await Job.Delay(TimeSpan.FromSeconds(10)); // a disposed timer ticks no more
        });

        Assert.Equal([2, 3, 4, 5, 6], ticks.Select(t => t.TotalSeconds));
        Assert.Equal(TimeSpan.FromSeconds(16), runtime.Now - start);
    }

    [Fact]
    public void TaskDelay_WithTheRuntimesTimeProvider_CompletesInVirtualTime()
    {
        using var runtime = new DeterministicRuntime(9);
        DateTimeOffset start = runtime.Now;
        var watch = Stopwatch.StartNew();
        Bounded.Run(runtime, async () => await Task.Delay(TimeSpan.FromHours(2), runtime.TimeProvider));
        Assert.Equal(TimeSpan.FromHours(2), runtime.Now - start);
        Assert.True(watch.Elapsed < RealTimeBound);
    }

    /// <summary>Ten jobs sleep until one and the same virtual instant; the order in which they wake.</summary>
    private static int[] FiringOrder(int seed)
    {
        using var runtime = new DeterministicRuntime(seed);
        var order = new List<int>();
        Bounded.Run(runtime, async () =>
        {
            var jobs = new Job[10];
            for (int i = 0; i < jobs.Length; i++)
            {
                jobs[i] = Sleeper(i, order);
            }

            await Job.WhenAll(jobs);
        });

        Assert.Equal(10, order.Count);
        return order.ToArray();

        static async Job Sleeper(int id, List<int> order)
        {
            await Job.Delay(TimeSpan.FromMilliseconds(50));
            order.Add(id);
        }
    }
}
