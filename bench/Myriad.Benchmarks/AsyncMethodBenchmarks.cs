using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;

namespace Myriad.Benchmarks;

/// <summary>
/// E4: the cost of one async method call with a tiny body, per return type. <c>Sync</c>: the awaited
/// gate is complete, the method completes synchronously. <c>Hop</c>: the gate is pending, the method
/// suspends, the benchmark (the producer) completes the gate, the method resumes inline and completes:
/// one suspend/resume hop. The gate is the same allocation-free awaitable for every return type.
/// </summary>
[Config(typeof(BenchConfig))]
[CategoriesColumn]
[GroupBenchmarksBy(BenchmarkDotNet.Configs.BenchmarkLogicalGroupRule.ByCategory)]
public class AsyncMethodBenchmarks
{
    private readonly Gate _open = new(open: true);
    private readonly Gate _closed = new(open: false);
    private int _i;

    [Benchmark(Baseline = true), BenchmarkCategory("sync")]
    public int Sync_Task() => TaskMethod(_open, _i++).GetAwaiter().GetResult();

    [Benchmark, BenchmarkCategory("sync")]
    public int Sync_ValueTask() => ValueTaskMethod(_open, _i++).GetAwaiter().GetResult();

    [Benchmark, BenchmarkCategory("sync")]
    public int Sync_PooledValueTask() => PooledMethod(_open, _i++).GetAwaiter().GetResult();

    [Benchmark, BenchmarkCategory("sync")]
    public int Sync_Job() => JobMethod(_open, _i++).GetAwaiter().GetResult();

    [Benchmark(Baseline = true), BenchmarkCategory("hop")]
    public int Hop_Task()
    {
        Task<int> t = TaskMethod(_closed, _i);
        _closed.Release(_i++);
        return t.GetAwaiter().GetResult();
    }

    [Benchmark, BenchmarkCategory("hop")]
    public int Hop_ValueTask()
    {
        ValueTask<int> t = ValueTaskMethod(_closed, _i);
        _closed.Release(_i++);
        return t.GetAwaiter().GetResult();
    }

    [Benchmark, BenchmarkCategory("hop")]
    public int Hop_PooledValueTask()
    {
        ValueTask<int> t = PooledMethod(_closed, _i);
        _closed.Release(_i++);
        return t.GetAwaiter().GetResult();
    }

    [Benchmark, BenchmarkCategory("hop")]
    public int Hop_Job()
    {
        Job<int> t = JobMethod(_closed, _i);
        _closed.Release(_i++);
        return t.GetAwaiter().GetResult();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int Mix(int value, int i) => (value * 31) ^ (i >> 3) ^ (i & 0x7F);

    private static async Task<int> TaskMethod(Gate gate, int i) => Mix(await gate, i);

    private static async ValueTask<int> ValueTaskMethod(Gate gate, int i) => Mix(await gate, i);

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<int> PooledMethod(Gate gate, int i) => Mix(await gate, i);

    private static async Job<int> JobMethod(Gate gate, int i) => Mix(await gate, i);

    /// <summary>Open: completes synchronously. Closed: holds one continuation until <see cref="Release"/>.</summary>
    private sealed class Gate(bool open) : ICriticalNotifyCompletion
    {
        private Action? _continuation;
        private int _value;

        public bool IsCompleted => open;

        public Gate GetAwaiter() => this;

        public int GetResult() => _value;

        public void OnCompleted(Action continuation) => UnsafeOnCompleted(continuation);

        public void UnsafeOnCompleted(Action continuation) => _continuation = continuation;

        public void Release(int value)
        {
            Action c = _continuation ?? throw new InvalidOperationException("nothing is waiting");
            _continuation = null;
            _value = value;
            c();
        }
    }
}
