using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using Myriad.Scheduling;

namespace Myriad.Benchmarks;

/// <summary>
/// E3: spawn a tiny job with state {A, B} and await it. One invocation spawns a batch of 1000 from
/// inside the runtime (a thread-pool task started with Task.Run / a job spawned on a worker; the
/// benchmark thread only waits), then awaits each and sums; figures are per spawn. The two
/// fire-and-forget cases queue the batch with typed state and no handle (the .NET thread pool's
/// generic <c>UnsafeQueueUserWorkItem</c>, Myriad's <c>SpawnDetached</c>), each item adding to a
/// shared sum, and wait for a countdown (a TaskCompletionSource, a <c>WaitGroup</c>).
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

    [Benchmark(OperationsPerInvoke = Batch, Description = "UnsafeQueueUserWorkItem(state)")]
    public long QueueUserWorkItemState() => Task.Run(static () => QueueBatch()).GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Batch, Description = "runtime.SpawnDetached(state)")]
    public long MyriadSpawnDetached() => _runtime.Run(_runtime, static rt => rt.Spawn(rt, static r => SpawnDetachedBatch(r)));

    private sealed class Countdown
    {
        public readonly TaskCompletionSource<long> Done = new(TaskCreationOptions.RunContinuationsAsynchronously);
        public long Sum;
        public int Left = Batch;
    }

    private static Task<long> QueueBatch()
    {
        var countdown = new Countdown();
        for (int i = 0; i < Batch; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(
                static s =>
                {
                    Interlocked.Add(ref s.countdown.Sum, s.A + s.B);
                    if (Interlocked.Decrement(ref s.countdown.Left) == 0)
                    {
                        s.countdown.Done.SetResult(Volatile.Read(ref s.countdown.Sum));
                    }
                },
                (countdown, A: (long)i, B: 1L),
                preferLocal: true);
        }

        return countdown.Done.Task;
    }

    private sealed class Sum
    {
        public long Value;
    }

    private static async Job<long> SpawnDetachedBatch(JobRuntime runtime)
    {
        var group = new Myriad.Coordination.WaitGroup();
        var sum = new Sum();
        group.Add(Batch);
        for (int i = 0; i < Batch; i++)
        {
            runtime.SpawnDetached((group, sum, A: (long)i, B: 1L), static s =>
            {
                Interlocked.Add(ref s.sum.Value, s.A + s.B);
                s.group.Done();
            });
        }

        await group.WaitAsync();
        return sum.Value;
    }

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
