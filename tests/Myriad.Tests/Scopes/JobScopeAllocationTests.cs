using System;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scopes;

/// <summary>A scope's child costs what a plain spawn costs: nothing per child in steady state.</summary>
[Collection(HeavyCollection.Name)]
public sealed class JobScopeAllocationTests
{
    private const int Children = 10_000;

    /// <summary>
    /// Everything runs on the one thread of a current-thread runtime, so the thread's allocation
    /// counter sees every rent and release. A limit of one keeps a single child (and its pooled boxes)
    /// in flight, as the plain loop that awaits each spawn does.
    /// </summary>
    [Theory]
    [InlineData(1)]
    [InlineData(0)]
    public void SpawnAsync_SteadyState_NoMoreThanAPlainSpawnPerChild(int limit)
    {
        using var runtime = new CurrentThreadRuntime();
        long plain = Measure(runtime, limit == 1
            ? static async rt =>
            {
                for (int i = 0; i < Children; i++)
                {
                    await rt.Spawn(i, static n => Job.FromResult(n));
                }
            }
            : static async rt =>
            {
                var jobs = new Job[Children];
                for (int i = 0; i < Children; i++)
                {
                    jobs[i] = rt.Spawn(i, static _ => Job.CompletedJob);
                }

                foreach (Job job in jobs)
                {
                    await job;
                }
            });
        long scoped = Measure(runtime, limit == 1
            ? static async rt =>
            {
                await using var scope = new JobScope(rt, maxConcurrency: 1);
                for (int i = 0; i < Children; i++)
                {
                    await scope.SpawnAsync(i, static (_, _) => Job.CompletedJob);
                }

                await scope;
            }
            : static async rt =>
            {
                await using var scope = new JobScope(rt);
                for (int i = 0; i < Children; i++)
                {
                    await scope.SpawnAsync(i, static (_, _) => Job.CompletedJob); // all in flight at once
                }

                await scope;
            });

        // The scope itself (its cancellation source, core, semaphore, idle waiters) is a fixed cost.
        // With one child in flight both loops reuse pooled boxes: 0 bytes per child. With every child
        // in flight at once the pools run dry and each spawn box is allocated; a scope's box is larger
        // by what it carries beside the state (the body and the token: 16 bytes plus padding), while
        // the plain loop pays for its handle array (8 bytes a child), which a scope does not need.
        const long PerScopeBudget = 8 * 1024;
        const long PerChildExtra = 24;
        Assert.True(
            scoped <= plain + (limit == 1 ? 0 : PerChildExtra * Children) + PerScopeBudget,
            $"scope: {scoped} B for {Children} children, plain spawns: {plain} B");
    }

    private static long Measure(JobRuntime runtime, Func<JobRuntime, Job> loop)
    {
        long best = long.MaxValue;
        for (int attempt = 0; attempt < 5; attempt++)
        {
            long bytes = runtime.Run((runtime, loop), static async s =>
            {
                await s.loop(s.runtime); // warm the pools
                long before = GC.GetAllocatedBytesForCurrentThread();
                await s.loop(s.runtime);
                return GC.GetAllocatedBytesForCurrentThread() - before;
            });
            best = Math.Min(best, bytes);
        }

        return best;
    }
}
