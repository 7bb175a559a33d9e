using System.Threading;
using BenchmarkDotNet.Attributes;
using Myriad.Scheduling;

namespace Myriad.Benchmarks;

/// <summary>
/// What a <see cref="JobScope"/> adds per child over a plain spawn. One invocation spawns a batch of
/// 1000 tiny children from a job on the runtime and waits for all of them: as plain spawns awaited one
/// by one, and into a scope (without and with a limit) awaited once. Figures are per child; the
/// allocation column (MemoryDiagnoser, on for every class through <see cref="BenchConfig"/>) is the one
/// to compare: a child must cost no more than a plain spawn plus a few bytes.
/// </summary>
[Config(typeof(BenchConfig))]
public class ScopeBenchmarks
{
    private const int Batch = 1000;

    private MultiThreadRuntime _runtime = null!;

    [GlobalSetup]
    public void Setup() => _runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = System.Environment.ProcessorCount });

    [GlobalCleanup]
    public void Cleanup() => _runtime.Dispose();

    [Benchmark(Baseline = true, OperationsPerInvoke = Batch, Description = "runtime.Spawn(state)")]
    public long PlainSpawn() => _runtime.Run(_runtime, static rt => rt.Spawn(rt, static r => PlainBatch(r)));

    [Benchmark(OperationsPerInvoke = Batch, Description = "scope.SpawnAsync(state)")]
    public long ScopeSpawn() => _runtime.Run(_runtime, static rt => rt.Spawn(rt, static r => ScopeBatch(r, 0)));

    [Benchmark(OperationsPerInvoke = Batch, Description = "scope.SpawnAsync(state), limit 4")]
    public long LimitedScopeSpawn() => _runtime.Run(_runtime, static rt => rt.Spawn(rt, static r => ScopeBatch(r, 4)));

    private static async Job<long> PlainBatch(JobRuntime runtime)
    {
        var jobs = new Job[Batch];
        var sum = new Sum();
        for (int i = 0; i < Batch; i++)
        {
            jobs[i] = runtime.Spawn((sum, i), static s => Interlocked.Add(ref s.sum.Value, s.i));
        }

        foreach (Job job in jobs)
        {
            await job;
        }

        return sum.Value;
    }

    private static async Job<long> ScopeBatch(JobRuntime runtime, int limit)
    {
        var sum = new Sum();
        await using var scope = new JobScope(runtime, limit);
        for (int i = 0; i < Batch; i++)
        {
            await scope.SpawnAsync((sum, i), static (s, _) =>
            {
                Interlocked.Add(ref s.sum.Value, s.i);
                return Job.CompletedJob;
            });
        }

        await scope;
        return sum.Value;
    }

    private sealed class Sum
    {
        public long Value;
    }
}
