using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using Myriad.Scheduling;

namespace Myriad.Benchmarks;

/// <summary>
/// E3: spawn a tiny job with state {A, B} and await it. One invocation spawns a batch of 1000 from
/// inside the runtime (a thread-pool task started with Task.Run / a job spawned on a worker; the
/// benchmark thread only waits), then awaits each and sums; figures are per spawn.
/// </summary>
[Config(typeof(BenchConfig))]
public class SpawnBenchmarks
{
    private const int Batch = 1000;

    private MultiThreadRuntime _runtime = null!;

    public struct State
    {
        public long A;
        public long B;
    }

    [GlobalSetup]
    public void Setup() => _runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = System.Environment.ProcessorCount });

    [GlobalCleanup]
    public void Cleanup() => _runtime.Dispose();

    [Benchmark(Baseline = true, OperationsPerInvoke = Batch, Description = "Task.Run closure")]
    public long TaskRunClosure() => Task.Run(static () => TaskRunBatch()).GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Batch, Description = "StartNew(state)")]
    public long StartNewState() => Task.Run(static () => StartNewBatch()).GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Batch, Description = "runtime.Spawn(state)")]
    public long MyriadSpawn() => _runtime.Run(_runtime, static rt => rt.Spawn(rt, static r => SpawnBatch(r)));

    private static async Task<long> TaskRunBatch()
    {
        var tasks = new Task<long>[Batch];
        for (int i = 0; i < Batch; i++)
        {
            State s = new() { A = i, B = 1 };
            tasks[i] = Task.Run(() => s.A + s.B);
        }

        long sum = 0;
        foreach (Task<long> t in tasks)
        {
            sum += await t;
        }

        return sum;
    }

    private static async Task<long> StartNewBatch()
    {
        var tasks = new Task<long>[Batch];
        for (int i = 0; i < Batch; i++)
        {
            tasks[i] = Task.Factory.StartNew(
                static o =>
                {
                    var s = (State)o!;
                    return s.A + s.B;
                },
                new State { A = i, B = 1 },
                CancellationToken.None,
                TaskCreationOptions.DenyChildAttach,
                TaskScheduler.Default);
        }

        long sum = 0;
        foreach (Task<long> t in tasks)
        {
            sum += await t;
        }

        return sum;
    }

    private static async Job<long> SpawnBatch(JobRuntime runtime)
    {
        var jobs = new Job<long>[Batch];
        for (int i = 0; i < Batch; i++)
        {
            jobs[i] = runtime.Spawn(new State { A = i, B = 1 }, static s => new Job<long>(s.A + s.B));
        }

        long sum = 0;
        for (int i = 0; i < Batch; i++)
        {
            sum += await jobs[i];
        }

        return sum;
    }
}
