using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// A seed's schedule does not depend on the thread that drives the runtime: a plain thread, a
/// thread-pool thread, or a task of a non-default <see cref="TaskScheduler"/> (a test framework's, a
/// UI's) draw the same order of jobs and Task continuations, so a failing seed replays anywhere.
/// </summary>
public sealed class DeterministicDrivingThreadTests
{
    private const int Seeds = 10;

    [Fact]
    public void Run_InsideATaskOfANonDefaultScheduler_SameScheduleAsOnAPlainThread()
    {
        var exclusive = new ConcurrentExclusiveSchedulerPair().ExclusiveScheduler;
        for (int seed = 0; seed < Seeds; seed++)
        {
            string onThread = TestHelpers.OnThread(() => DetachedJobsThenRun(seed));
            string inTask = Task.Factory.StartNew(() => DetachedJobsThenRun(seed), CancellationToken.None, TaskCreationOptions.None, exclusive)
                .WaitAsync(TimeSpan.FromSeconds(30)).GetAwaiter().GetResult();
            Assert.Equal(onThread, inTask);
        }
    }

    [Fact]
    public void TaskContinuations_DrivenFromAThreadPoolThread_SameScheduleAsFromAPlainThread()
    {
        var distinct = new HashSet<string>();
        for (int seed = 0; seed < Seeds; seed++)
        {
            string onThread = TestHelpers.OnThread(() => TasksOnTheRuntimesScheduler(seed));
            string onPool = Task.Run(() => TasksOnTheRuntimesScheduler(seed)).WaitAsync(TimeSpan.FromSeconds(30)).GetAwaiter().GetResult();
            Assert.Equal(onThread, onPool);
            distinct.Add(onThread);
        }

        Assert.True(distinct.Count > 1, "the seeds should order the continuations differently");
    }

    [Fact]
    public void Run_BodyThatYieldsFirst_SeedsOrderItAmongTheJobsSpawnedBefore()
    {
        // The body's first stretch always runs first (Run starts it at once); after a yield it is
        // one queued item among the others, and the seed places it (docs/testing.md).
        var positions = new HashSet<int>();
        for (int seed = 0; seed < 20; seed++)
        {
            using var runtime = new DeterministicRuntime(seed);
            var order = new List<string>();
            for (int i = 0; i < 3; i++)
            {
                runtime.SpawnDetached((order, i), static s => s.order.Add($"d{s.i}"));
            }

            runtime.Run(order, static async order =>
            {
                await Job.Yield();
                order.Add("body");
            });
            runtime.RunUntilIdle();
            positions.Add(order.IndexOf("body"));
        }

        Assert.True(positions.Count > 1, $"the body ran at the same place under every seed: {string.Join(",", positions)}");
    }

    /// <summary>The guide's pattern: detached jobs, then <c>Run</c> of a body that yields.</summary>
    private static string DetachedJobsThenRun(int seed)
    {
        using var runtime = new DeterministicRuntime(seed);
        var order = new List<string>();
        for (int i = 0; i < 4; i++)
        {
            runtime.SpawnDetached((order, i), static async s =>
            {
                s.order.Add($"d{s.i}");
                await Job.Yield();
            });
        }

        runtime.Run(order, static async order =>
        {
            order.Add("body");
            await Job.Yield();
            order.Add("body2");
        });
        runtime.RunUntilIdle();
        return string.Join(",", order) + $" steps={runtime.Steps}";
    }

    /// <summary>Tasks on the runtime's scheduler, each resumed by a virtual <c>Task.Delay</c> of the same deadline.</summary>
    private static string TasksOnTheRuntimesScheduler(int seed)
    {
        using var runtime = new DeterministicRuntime(seed);
        var order = new List<string>();
        runtime.Run((runtime, order), static async s =>
        {
            var tasks = new Task[3];
            for (int i = 0; i < tasks.Length; i++)
            {
                int id = i;
                tasks[i] = Task.Factory.StartNew(async () =>
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(5), s.runtime.TimeProvider);
                    s.order.Add($"t{id}");
                }, CancellationToken.None, TaskCreationOptions.None, s.runtime.TaskScheduler).Unwrap();
            }

            foreach (Task task in tasks)
            {
                await task;
            }
        });
        return string.Join(",", order) + $" steps={runtime.Steps}";
    }
}
