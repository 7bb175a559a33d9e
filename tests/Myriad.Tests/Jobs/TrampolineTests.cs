using System;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>Experiment E1: no recursion depth and no chain length may overflow the stack.</summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Slow")]
public class TrampolineTests
{
    private const long Depth = 10_000_000;
    private const int ChainLength = 1_000_000;

    private static async Job<long> Count(long n) => n <= 0 ? 0 : 1 + await Count(n - 1);

    private static async Job<int> Link(Job<int> previous) => await previous + 1;

    [Fact]
    public void Recursion_TenMillionDeep_OnPlainThreadWithOneMegabyteStack_ReturnsDepth()
    {
        long result = TestHelpers.OnThread(() => Count(Depth).Wait(), stackSize: 1 << 20);
        Assert.Equal(Depth, result);
    }

    [Fact]
    public void Recursion_TenMillionDeep_OnMultiThreadWorkers_ReturnsDepth()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, ThreadStackSize = 1 << 20 });
        long result = TestHelpers.OnThread(() => runtime.Run(runtime, static async rt => await rt.Spawn(static () => Count(Depth))));
        Assert.Equal(Depth, result);
    }

    [Fact]
    public void Recursion_TenMillionDeep_OnCurrentThreadRuntime_ReturnsDepth()
    {
        using var runtime = new CurrentThreadRuntime();
        long result = TestHelpers.OnThread(() => runtime.Run(static () => Count(Depth)), stackSize: 1 << 20);
        Assert.Equal(Depth, result);
    }

    [Fact]
    public void Recursion_TenMillionDeep_OnDeterministicRuntime_ReturnsDepth()
    {
        using var runtime = new DeterministicRuntime(seed: 7);
        long result = TestHelpers.OnThread(() => runtime.Run(static () => Count(Depth)), stackSize: 1 << 20);
        Assert.Equal(Depth, result);
    }

    [Fact]
    public void Chain_OneMillionJobs_CompletingTheFirstResumesAll()
    {
        int result = TestHelpers.OnThread(() =>
        {
            var head = new Promise<int>();
            Job<int> tail = head.Job;
            for (int i = 0; i < ChainLength; i++)
            {
                tail = Link(tail);
            }

            Assert.False(tail.IsCompleted);
            head.SetResult(0);
            return tail.Wait();
        }, stackSize: 1 << 20);
        Assert.Equal(ChainLength, result);
    }

    [Fact]
    public void Chain_OneMillionJobs_CompletedFromAWorker_ResumesAll()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, ThreadStackSize = 1 << 20 });
        var head = new Promise<int>();
        Job<int> tail = head.Job;
        for (int i = 0; i < ChainLength; i++)
        {
            tail = Link(tail);
        }

        runtime.Spawn(head, static h => h.SetResult(0)).Wait();
        Assert.Equal(ChainLength, TestHelpers.OnThread(() => tail.Wait()));
    }
}
