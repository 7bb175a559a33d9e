using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace Myriad.Compare.Experiments;

/// <summary>
/// E4: the cost of an async method. Every variant is the same method body, <c>await gate; return
/// Mix(value, i);</c>, with a different return type / builder. Mode <c>sync</c>: the gate is already
/// open, so the await does not suspend and the method completes synchronously. Mode <c>suspend</c>:
/// the gate is pending, the method suspends once, and the driver (the producer) then opens it,
/// which resumes the method inline on the same thread. The gate is the same allocation-free custom
/// awaitable for all four variants, so the difference is the method builders' own cost.
/// </summary>
internal static class AsyncOverhead
{
    public const string Sync = "sync";
    public const string Suspend = "suspend";

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Mix(int value, int i) => (value * 31) ^ (i >> 3) ^ (i & 0x7F);

    public static long Expected(Case c)
    {
        long sum = 0;
        for (int i = 0; i < c.N; i++)
        {
            sum += Mix(i, i);
        }

        return sum;
    }

    public static long TplTask(Case c)
    {
        var gate = new Gate(c.Mode == Sync);
        int n = checked((int)c.N);
        long sum = 0;
        for (int i = 0; i < n; i++)
        {
            Task<int> t = TaskMethod(gate, i);
            gate.Release(i);
            if (!t.IsCompleted)
            {
                throw NotCompleted();
            }

            sum += t.GetAwaiter().GetResult();
        }

        return sum;
    }

    public static long TplValueTask(Case c)
    {
        var gate = new Gate(c.Mode == Sync);
        int n = checked((int)c.N);
        long sum = 0;
        for (int i = 0; i < n; i++)
        {
            ValueTask<int> t = ValueTaskMethod(gate, i);
            gate.Release(i);
            if (!t.IsCompleted)
            {
                throw NotCompleted();
            }

            sum += t.GetAwaiter().GetResult();
        }

        return sum;
    }

    public static long TplPooled(Case c)
    {
        var gate = new Gate(c.Mode == Sync);
        int n = checked((int)c.N);
        long sum = 0;
        for (int i = 0; i < n; i++)
        {
            ValueTask<int> t = PooledMethod(gate, i);
            gate.Release(i);
            if (!t.IsCompleted)
            {
                throw NotCompleted();
            }

            sum += t.GetAwaiter().GetResult();
        }

        return sum;
    }

    public static long Myriad(Case c)
    {
        var gate = new Gate(c.Mode == Sync);
        int n = checked((int)c.N);
        long sum = 0;
        for (int i = 0; i < n; i++)
        {
            Job<int> t = JobMethod(gate, i);
            gate.Release(i);
            if (!t.IsCompleted)
            {
                throw NotCompleted();
            }

            sum += t.GetAwaiter().GetResult();
        }

        return sum;
    }

    private static InvalidOperationException NotCompleted() => new("The method did not complete when the gate opened.");

    private static async Task<int> TaskMethod(Gate gate, int i) => Mix(await gate, i);

    private static async ValueTask<int> ValueTaskMethod(Gate gate, int i) => Mix(await gate, i);

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<int> PooledMethod(Gate gate, int i) => Mix(await gate, i);

    private static async Job<int> JobMethod(Gate gate, int i) => Mix(await gate, i);

    /// <summary>
    /// The awaited thing. Open: completes synchronously with the value the driver will release (the
    /// driver's next <see cref="Release"/> is then a no-op). Closed: stores the one continuation;
    /// <see cref="Release"/> runs it inline. No allocation either way.
    /// </summary>
    private sealed class Gate(bool open) : ICriticalNotifyCompletion
    {
        private readonly bool _open = open;
        private Action? _continuation;
        private int _value;
        private int _next;

        public bool IsCompleted => _open;

        public Gate GetAwaiter() => this;

        public int GetResult() => _open ? _next++ : _value;

        public void OnCompleted(Action continuation) => UnsafeOnCompleted(continuation);

        public void UnsafeOnCompleted(Action continuation)
        {
            if (_continuation is not null)
            {
                throw new InvalidOperationException("The gate already has a waiter.");
            }

            _continuation = continuation;
        }

        public void Release(int value)
        {
            if (_open)
            {
                return;
            }

            Action continuation = _continuation ?? throw new InvalidOperationException("Nothing is waiting on the gate: the method did not suspend.");
            _continuation = null;
            _value = value;
            continuation();
        }
    }
}
