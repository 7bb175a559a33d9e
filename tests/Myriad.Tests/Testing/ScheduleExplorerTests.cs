using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Testing;
using Xunit;
using Xunit.Abstractions;

namespace Myriad.Tests.Testing;

/// <summary>
/// The explorer finds bugs planted in copies of primitives (<see cref="RacyWaitGroup"/>,
/// <see cref="LostWakeupMutex"/>, <see cref="MissedNotifyBuffer"/>) with both strategies, reports
/// the seed and a replay line, and the replay fails the same way.
/// </summary>
public sealed class ScheduleExplorerTests(ITestOutputHelper output)
{
    /// <summary>The most seeds a planted bug may take to show; docs/testing.md records how many each one took.</summary>
    private const int SeedBudget = 200;

    public static IEnumerable<object[]> Cases()
    {
        foreach (string bug in new[] { "waitgroup", "mutex", "buffer" })
        {
            yield return [bug, ScheduleStrategy.Random];
            yield return [bug, ScheduleStrategy.Priority];
        }
    }

    [Theory]
    [InlineData(ScheduleStrategy.Random)]
    [InlineData(ScheduleStrategy.Priority)]
    public void Explore_WakerClearsStateAfterSignalling_IsFound(ScheduleStrategy strategy)
    {
        // The waker signals, then clears what the woken job is about to read. On a multi-thread
        // runtime the woken job may run after the clear; a runtime that resumed it inside the
        // signalling call would never show that order, and no seed would find the bug.
        var found = Assert.Throws<ScheduleExplorationException>(() => ScheduleExplorer.Explore(async runtime =>
        {
            bool waiting = false;
            string? state = "ready";
            string? seen = null;
            var signal = new Promise<int>();
            Job waiter = runtime.Spawn(async () =>
            {
                waiting = true; // the same step suspends below: nothing runs in between
                await signal.Job;
                seen = state;
            });
            while (!waiting)
            {
                await Task.Yield();
            }

            signal.SetResult(1);
            state = null; // the bug
            await waiter;
            if (seen is null)
            {
                throw new InvalidOperationException("the woken job read state its waker had cleared");
            }
        }, new ExplorationOptions { Seeds = SeedBudget, Strategy = strategy }));

        Assert.IsType<InvalidOperationException>(found.InnerException);
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void Explore_PlantedBug_IsFoundWithinTheSeedBudgetAndReplays(string bug, ScheduleStrategy strategy)
    {
        Func<DeterministicRuntime, Job> body = Body(bug);
        var found = Assert.Throws<ScheduleExplorationException>(() =>
            ScheduleExplorer.Explore(body, new ExplorationOptions { Seeds = SeedBudget, Strategy = strategy }));

        output.WriteLine($"{bug} / {strategy}: found at seed {found.Seed} after {found.Runs} run(s): {found.InnerException?.GetType().Name}");
        output.WriteLine(found.Message);
        Assert.InRange(found.Runs, 1, SeedBudget);
        Assert.Contains($"seed: {found.Seed}", found.ReplayLine);
        Assert.Contains(found.ReplayLine, found.Message);
        Assert.NotNull(found.InnerException);

        // The replay line's parameters fail the same way, every time.
        for (int i = 0; i < 3; i++)
        {
            Exception again = Assert.ThrowsAny<Exception>(() =>
                ScheduleExplorer.Replay(body, found.Seed, found.Strategy, found.PriorityChangePoints, found.StepHorizon));
            Assert.Equal(found.InnerException!.GetType(), again.GetType());
            Assert.Equal(found.InnerException.Message, again.Message);
        }
    }

    [Theory]
    [InlineData(ScheduleStrategy.Random)]
    [InlineData(ScheduleStrategy.Priority)]
    public void Explore_CorrectBody_RunsEverySeed(ScheduleStrategy strategy)
    {
        int runs = ScheduleExplorer.Explore(
            async runtime =>
            {
                var group = new Myriad.Coordination.WaitGroup();
                group.Add(3);
                var workers = new Job[3];
                for (int i = 0; i < 3; i++)
                {
                    workers[i] = runtime.Spawn(async () =>
                    {
                        await Task.Yield();
                        group.Done();
                    });
                }

                await group.WaitAsync();
                await Job.WhenAll(workers);
            },
            new ExplorationOptions { Seeds = 150, Strategy = strategy });
        Assert.Equal(150, runs);
    }

    [Fact]
    public void Explore_LostUpdate_ReportsSeedAndReplayLine()
    {
        var found = Assert.Throws<ScheduleExplorationException>(() => ScheduleExplorer.Explore(async runtime =>
        {
            int count = 0;
            Job Increment() => runtime.Spawn(async () =>
            {
                int seen = count;
                await Task.Yield();
                count = seen + 1;
            });
            await Job.WhenAll(Increment(), Increment());
            if (count != 2)
            {
                throw new InvalidOperationException($"lost an update: {count}");
            }
        }));

        Assert.Contains($"Seed {found.Seed}", found.Message);
        Assert.Contains("ScheduleExplorer.Replay(body, seed: ", found.Message);
        Assert.IsType<InvalidOperationException>(found.InnerException);
    }

    [Fact]
    public void Explore_ReadmeExample_FindsTheLostUpdate()
    {
        var found = Assert.Throws<ScheduleExplorationException>(() => ScheduleExplorer.Explore(async runtime =>
        {
            int count = 0;
            Job Increment() => runtime.Spawn(async () => { int seen = count; await Task.Yield(); count = seen + 1; });
            await Job.WhenAll(Increment(), Increment());
            if (count != 2) throw new InvalidOperationException($"lost an update: {count}");
        }, new ExplorationOptions { Seeds = 500, Strategy = ScheduleStrategy.Priority }));
        output.WriteLine(found.Message);
        Assert.Equal("lost an update: 1", found.InnerException!.Message);
    }

    [Theory]
    [InlineData(ScheduleStrategy.Random)]
    [InlineData(ScheduleStrategy.Priority)]
    public void Explore_DetachedJobFails_FailsTheRunWithItsException(ScheduleStrategy strategy)
    {
        // An assertion in a detached job is a failure of the run: it raised UnobservedException,
        // which nobody watched, and the explorer reported every seed as passed.
        var found = Assert.Throws<ScheduleExplorationException>(() => ScheduleExplorer.Explore(async runtime =>
        {
            runtime.SpawnDetached(async () =>
            {
                await Task.Yield();
                throw new InvalidOperationException("assertion in a detached job");
            });
            await Job.Delay(10);
        }, new ExplorationOptions { Seeds = 5, Strategy = strategy }));

        Assert.Equal(1, found.Runs);
        var failure = Assert.IsType<InvalidOperationException>(found.InnerException);
        Assert.Equal("assertion in a detached job", failure.Message);
    }

    [Fact]
    public void Replay_DirectlyStartedJobHandedToDetachFails_Rethrows()
    {
        static async Job Fail()
        {
            await Job.Delay(5);
            throw new FormatException("detached by hand");
        }

        var failure = Assert.Throws<FormatException>(() => ScheduleExplorer.Replay(async runtime =>
        {
            runtime.Detach(Fail());
            await Job.Delay(10);
        }, seed: 3));
        Assert.Equal("detached by hand", failure.Message);
    }

    [Fact]
    public void Explore_DetachedJobFailsAndTheBodyDeadlocks_ReportsBothDetachedFirst()
    {
        // A worker that dies before its Done leaves the waiter stuck: the deadlock is only the
        // consequence, so the report leads with the worker's failure.
        var found = Assert.Throws<ScheduleExplorationException>(() => ScheduleExplorer.Explore(async runtime =>
        {
            var group = new Myriad.Coordination.WaitGroup();
            group.Add(1);
            runtime.SpawnDetached(group, static async g =>
            {
                await Task.Yield();
                throw new InvalidOperationException("worker died before Done");
            });
            await group.WaitAsync();
        }, new ExplorationOptions { Seeds = 1 }));

        var both = Assert.IsType<AggregateException>(found.InnerException);
        Assert.Collection(
            both.InnerExceptions,
            e => Assert.Equal("worker died before Done", Assert.IsType<InvalidOperationException>(e).Message),
            e => Assert.IsType<DeadlockException>(e));
        Assert.Contains("worker died before Done", found.Message);
    }

    [Fact]
    public void Explore_HandledFailureOfAWatchedJob_DoesNotFailTheRun()
    {
        // Only failures nobody observes count: an awaited job's exception that the body catches is fine.
        int runs = ScheduleExplorer.Explore(async runtime =>
        {
            try
            {
                await runtime.Spawn(async () =>
                {
                    await Task.Yield();
                    throw new InvalidOperationException("expected");
                });
            }
            catch (InvalidOperationException)
            {
            }
        }, new ExplorationOptions { Seeds = 10 });
        Assert.Equal(10, runs);
    }

    [Fact]
    public void Explore_RunsLongerThanTwiceTheHorizon_MeasuredHorizonGrowsToTheLongestRun()
    {
        // Ten jobs of 30 yields: about 310 steps a run. The horizon was taken only from runs of at
        // most twice the current one, so it stayed at 100 for any body over 200 steps, and PCT put
        // every change point in the first hundred steps.
        long longest = 0;
        var found = Assert.Throws<ScheduleExplorationException>(() => ScheduleExplorer.Explore(async runtime =>
        {
            var jobs = new Job[10];
            for (int i = 0; i < jobs.Length; i++)
            {
                jobs[i] = runtime.Spawn(30, static async yields =>
                {
                    for (int k = 0; k < yields; k++)
                    {
                        await Task.Yield();
                    }
                });
            }

            await Job.WhenAll(jobs);
            longest = Math.Max(longest, runtime.Steps);
            if (runtime.Seed == 4)
            {
                throw new InvalidOperationException("stop here to read the horizon");
            }
        }, new ExplorationOptions { Seeds = 10, Strategy = ScheduleStrategy.Priority }));

        Assert.Equal(4, found.Seed);
        Assert.InRange(longest, 300, 400);

        // The body reads the count before its own last steps (its job's completion resumes Run's
        // waiter, which is a step of its own), so the run is a few steps longer than what it read.
        Assert.InRange(found.StepHorizon, longest, longest + 4);
    }

    [Fact]
    public void Explore_PollingBody_MeasuredHorizonStopsAtMaxStepHorizon()
    {
        // A job that polls with the top priority runs until the schedule turns random at twice the
        // horizon, so every run is longer than the last: the horizon must stop growing somewhere.
        var found = Assert.Throws<ScheduleExplorationException>(() => ScheduleExplorer.Explore(async runtime =>
        {
            bool set = false;
            Job poller = runtime.Spawn(async () =>
            {
                while (!Volatile.Read(ref set))
                {
                    await Task.Yield();
                }
            });
            Job setter = runtime.Spawn(async () =>
            {
                await Task.Yield();
                Volatile.Write(ref set, true);
            });
            await Job.WhenAll(poller, setter);
            if (runtime.Seed == 19)
            {
                throw new InvalidOperationException("stop here to read the horizon");
            }
        }, new ExplorationOptions { Seeds = 20, Strategy = ScheduleStrategy.Priority, PriorityChangePoints = 0, MaxStepHorizon = 1_000 }));

        Assert.Equal(19, found.Seed);
        Assert.InRange(found.StepHorizon, 100, 1_000);
    }

    [Fact]
    public void Explore_BadArguments_Throw()
    {
        Assert.Throws<ArgumentNullException>(() => ScheduleExplorer.Explore(null!));
        Assert.Throws<ArgumentOutOfRangeException>(() => ScheduleExplorer.Explore(_ => default, new ExplorationOptions { Seeds = 0 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => ScheduleExplorer.Explore(_ => default, new ExplorationOptions { PriorityChangePoints = -1 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => ScheduleExplorer.Explore(_ => default, new ExplorationOptions { MaxStepHorizon = 0 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => ScheduleExplorer.Explore(_ => default, new ExplorationOptions { FirstSeed = int.MaxValue, Seeds = 2 }));
    }

    private static Func<DeterministicRuntime, Job> Body(string bug) => bug switch
    {
        "waitgroup" => async runtime =>
        {
            var group = new RacyWaitGroup();
            group.Add(3);
            var workers = new Job[3];
            for (int i = 0; i < 3; i++)
            {
                workers[i] = runtime.Spawn(async () =>
                {
                    await Task.Yield(); // work
                    await group.Done();
                });
            }

            await group.WaitAsync(); // a lost decrement leaves the count above zero: a deadlock
            await Job.WhenAll(workers);
        },
        "mutex" => async runtime =>
        {
            var mutex = new LostWakeupMutex();
            int inside = 0;
            var workers = new List<Job>();
            for (int i = 0; i < 3; i++)
            {
                workers.Add(runtime.Spawn(async () =>
                {
                    await mutex.LockAsync();
                    Assert.Equal(1, ++inside);
                    await Task.Yield(); // critical section
                    inside--;
                    mutex.Unlock();
                }));
            }

            await Job.WhenAll(workers);
        },
        "buffer" => async runtime =>
        {
            var buffer = new MissedNotifyBuffer();
            Job producer = runtime.Spawn(async () =>
            {
                for (int i = 0; i < 4; i++)
                {
                    await buffer.PutAsync(i);
                }
            });
            for (int i = 0; i < 4; i++)
            {
                Assert.Equal(i, await buffer.TakeAsync());
                await Task.Yield(); // work on the item
            }

            await producer;
        },
        _ => throw new ArgumentOutOfRangeException(nameof(bug)),
    };
}
