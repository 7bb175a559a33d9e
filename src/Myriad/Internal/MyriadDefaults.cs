using System;
using System.Threading;

namespace Myriad.Internal;

/// <summary>
/// Process-wide tuning constants for the job machinery (not per runtime, because a job does not know
/// which runtime it belongs to). Each can be overridden before first use through an
/// <see cref="AppContext"/> switch, e.g. in the project file:
/// <c>&lt;RuntimeHostConfigurationOption Include="Myriad.MaxInlineDepth" Value="64" /&gt;</c>.
/// </summary>
internal static class MyriadDefaults
{
    /// <summary>
    /// How many continuations or synchronously-started async methods may nest on one thread's stack
    /// before the trampoline hands the next one to a queue. Each level costs two or three frames
    /// (builder Start or dispatch, MoveNext, the awaited job's completion), about 300-500 bytes in
    /// Release builds; 48 levels stay well under 32 KiB, far from a 1 MiB thread stack, while long
    /// enough that the common chains of a handful of awaits never leave the inline fast path.
    /// AppContext key: <c>Myriad.MaxInlineDepth</c>.
    /// </summary>
    internal static readonly int MaxInlineDepth = ReadInt("Myriad.MaxInlineDepth", 48, 1, 10_000);

    /// <summary>
    /// How many continuations one item of a <see cref="Scheduling.CurrentThreadRuntime"/>'s queue may
    /// resume inline, one after the other, before the rest it wakes go to the back of the queue. A
    /// producer and a consumer that hand items over inline unwind the stack after every hand-off, so
    /// the depth limit never stops them, and nothing else queued (another job, a timer's wake-up) ran
    /// until they were done. 128 is Tokio's cooperative budget (operations per task poll): high enough
    /// that a ping-pong pays the queue once per 128 hops, low enough that others wait microseconds.
    /// AppContext key: <c>Myriad.InlineBudget</c>.
    /// </summary>
    internal static readonly int InlineBudget = ReadInt("Myriad.InlineBudget", 128, 1, 1_000_000);

    /// <summary>
    /// How long, in milliseconds, a thread blocked in a synchronous read or write of a driver socket's
    /// <see cref="System.IO.Stream"/> view waits in the kernel before it looks again whether the runtime
    /// that drives the socket was disposed. Disposing the connection wakes it at once (the close does),
    /// but the runtime's disposal aborts the socket's registration without touching the socket, which
    /// stays open until its owner disposes it, so nothing else could wake such a thread: this bounds how
    /// long it goes on waiting after the disposal. 100 ms keeps the cost at ten wake-ups a second per
    /// blocked thread while a shutdown still sees it fail within a tenth of a second.
    /// AppContext key: <c>Myriad.BlockingIoRecheckMilliseconds</c>.
    /// </summary>
    internal static readonly int BlockingIoRecheckMilliseconds = ReadInt("Myriad.BlockingIoRecheckMilliseconds", 100, 1, 60_000);

    /// <summary>
    /// How many steps a <see cref="Scheduling.DeterministicRuntime"/> runs without going idle before
    /// its clock moves to the next pending timer (if there is one) although jobs can still run. Its clock
    /// otherwise moves only when nothing can run, so a job that polls (yields in a loop until a timer's
    /// job sets a flag) kept the clock still and spun forever. A million steps is about a second of
    /// real time for such a loop, and far more than a test's work at one instant usually takes, so
    /// ordinary runs keep "time moves only when idle". The count of steps is the seed's, so when the
    /// clock moves stays a function of the seed.
    /// AppContext key: <c>Myriad.BusyClockSteps</c>.
    /// </summary>
    internal static readonly int BusyClockSteps = ReadInt("Myriad.BusyClockSteps", 1_000_000, 1, int.MaxValue);

    /// <summary>
    /// Boxes kept per thread per box type, initially. A hop that suspends and resumes on one thread
    /// reuses one box; a little depth absorbs fan-out of a few jobs without touching the shared
    /// slots. 8 mirrors the order of magnitude of the BCL's pooling builder (one per thread plus
    /// per-core slots). Grows on demand up to <see cref="PerThreadPoolMaxDepth"/>.
    /// AppContext key: <c>Myriad.ThreadPoolDepth</c>.
    /// </summary>
    internal static readonly int PerThreadPoolDepth = ReadInt("Myriad.ThreadPoolDepth", 8, 0, 4096);

    /// <summary>
    /// The most boxes a per-thread stack grows to (it doubles from <see cref="PerThreadPoolDepth"/>
    /// when a return finds it full, and shrinks back after every gen-2 collection). 1024 covers the
    /// spawn-experiment pattern, a job that spawns a batch of 1000 jobs and awaits them, so that every batch after
    /// the first recycles its boxes instead of allocating them. AppContext key:
    /// <c>Myriad.ThreadPoolMaxDepth</c> (never below the initial depth).
    /// </summary>
    internal static readonly int PerThreadPoolMaxDepth = Math.Max(PerThreadPoolDepth, ReadInt("Myriad.ThreadPoolMaxDepth", 1024, 0, 1 << 20));

    /// <summary>
    /// Shared pool slots per box type, as a multiple of the processor count: boxes rented on one
    /// worker and released on another (producer/consumer) flow back through them.
    /// AppContext key: <c>Myriad.SharedPoolSlotsPerCore</c>.
    /// </summary>
    internal static readonly int SharedPoolSlotsPerCore = ReadInt("Myriad.SharedPoolSlotsPerCore", 4, 0, 1024);

    /// <summary>
    /// Spin iterations a plain thread makes in a blocking wait before it sleeps on a monitor.
    /// <see cref="System.Threading.SpinWait"/> starts yielding after about 10 iterations; 20 covers a
    /// cross-core completion of a tiny job on this class of machine without burning a core for long.
    /// AppContext key: <c>Myriad.BlockingSpinCount</c>.
    /// </summary>
    internal static readonly int BlockingSpinCount = ReadInt("Myriad.BlockingSpinCount", 20, 0, 10_000);

    /// <summary>
    /// Pause instructions between two looks at a parker's permit while it spins before sleeping
    /// (<see cref="Scheduling.RuntimeOptions.IdleSpin"/>): about a microsecond on current x64 cores,
    /// so the look and the clock read cost little against the wait, while a permit is still seen
    /// within a microsecond or so. AppContext key: <c>Myriad.ParkSpinBatch</c>.
    /// </summary>
    internal static readonly int ParkSpinBatch = ReadInt("Myriad.ParkSpinBatch", 20, 1, 10_000);

    /// <summary>
    /// Spin rounds of a parker between two yields of its core (<see cref="Thread.Yield"/>): a yield
    /// every few microseconds. Where threads outnumber cores, the thread that would give the permit
    /// may be waiting for the very core the spin holds; without yields the spin delayed each hop of
    /// a cross-runtime ping-pong by up to the whole spin on a loaded machine.
    /// AppContext key: <c>Myriad.ParkYieldEvery</c>.
    /// </summary>
    internal static readonly int ParkYieldEvery = ReadInt("Myriad.ParkYieldEvery", 4, 1, 10_000);

    /// <summary>
    /// How many of its newest run-queue entries a worker searches for a spawned job that an awaiting
    /// job runs inline (join helping) when that job is not the newest entry, to clear its entry
    /// (<see cref="Scheduling.LocalQueue"/>, Forget). A parent that spawns its children and awaits
    /// them in order finds child i at depth (children - i); 32 covers the fan-outs that spawn-then-
    /// await code typically has (a 10-ary tree, a batch of a few dozen) at a cost of a few
    /// reference compares, and a miss only leaves a stale entry behind, as before.
    /// AppContext key: <c>Myriad.ForgetScanDepth</c> (0 turns clearing off).
    /// </summary>
    internal static readonly int ForgetScanDepth = ReadInt("Myriad.ForgetScanDepth", 32, 0, 4096);

    /// <summary>
    /// How many <see cref="Scheduling.RuntimeOptions.SpareThreadDelay"/>s queued work may wait while
    /// every worker keeps running jobs (busy, not blocked: typically helping joins of a spawn tree,
    /// which does not bring them back to their loops) before the wake watchdog starts a spare thread
    /// for it anyway. 5 (100 ms by default) lets a CPU-bound fork-join of a tenth of a second finish
    /// on the workers alone, while work that those workers left queued, and that something else
    /// waits for, is still reached in bounded time. AppContext key: <c>Myriad.BusyStallFactor</c>.
    /// </summary>
    internal static readonly int BusyStallFactor = ReadInt("Myriad.BusyStallFactor", 5, 1, 1000);

    /// <summary>
    /// How many threads own a cell of each runtime-wide job counter (spawned, completed), in the
    /// order they first use Myriad (<see cref="StripedCounter"/>): a thread with a cell of its own
    /// counts without an interlocked instruction; later threads share interlocked cells. 64 covers
    /// the workers, spares and driving threads of a few runtimes, at 8 KiB per counter.
    /// AppContext key: <c>Myriad.CounterOwnedStripes</c> (0: every thread shares).
    /// </summary>
    internal static readonly int CounterOwnedStripes = ReadInt("Myriad.CounterOwnedStripes", 64, 0, 4096);

    /// <summary>
    /// How long a worker blocked in <c>Wait()</c> sleeps when it has nothing to run before looking
    /// for work again. The awaited job's completion wakes it at once; the timeout only bounds how
    /// long new work in other workers' queues waits for this worker's help. 1 ms: the scale of a
    /// scheduler tick. AppContext key: <c>Myriad.HelpLoopParkMilliseconds</c>.
    /// </summary>
    internal static readonly int HelpLoopParkMilliseconds = ReadInt("Myriad.HelpLoopParkMilliseconds", 1, 1, 1000);

    /// <summary>
    /// The stack a blocking wait nested in another's helping keeps in reserve before it runs more
    /// work on top of itself, on a thread Myriad started with a known stack size
    /// (<c>RuntimeOptions.ThreadStackSize</c>); at most half that size. 128 KiB: the reserve
    /// <c>RuntimeHelpers.TryEnsureSufficientExecutionStack</c> keeps on 64-bit (measured: it turns
    /// false with about 128 KiB left), which is the check on every other thread; half of a 128 KiB
    /// stack, the smallest allowed, still holds the 48 inline levels the trampoline runs (about 48 KiB).
    /// AppContext key: <c>Myriad.NestedWaitStackReserve</c> (bytes).
    /// </summary>
    internal static readonly int NestedWaitStackReserve = ReadInt("Myriad.NestedWaitStackReserve", 128 * 1024, 16 * 1024, 64 * 1024 * 1024);

    /// <summary>
    /// Stack size in bytes of each multi-threaded runtime's lazy-wake watchdog thread. It runs a
    /// short loop of its own (no user code, no jobs), so 256 KiB is ample where the platform default
    /// would reserve 8 MiB per runtime; the minimum the runtime accepts is far below it.
    /// AppContext key: <c>Myriad.WatchdogStackSize</c>.
    /// </summary>
    internal static readonly int WatchdogStackSize = ReadInt("Myriad.WatchdogStackSize", 256 * 1024, 64 * 1024, 16 * 1024 * 1024);

    /// <summary>
    /// How many jobs a failure crosses with its stack trace growing by each one's frames; beyond that
    /// the trace keeps the origin and these first levels, and every further level rethrows the same
    /// captured state (see <see cref="Jobs.JobFailure"/>), so a failure crosses a recursion of any
    /// depth in linear time. Each traced level adds about three frames (the awaiter's GetResult and
    /// the awaiting method); the cost of every level beyond is one copy of the kept trace, so the
    /// value trades trace length against that copy. 64 levels keep every level of any realistic
    /// async call stack (and more than the 48 levels the trampoline nests inline); measured through a
    /// 200,000-level recursion, 64 adds a fifth or less to the cost of the throws themselves
    /// (0.8 s against 0.7 s with 0 levels; 256 levels: 1.1 s).
    /// AppContext key: <c>Myriad.FailureTraceLevels</c> (0 keeps only the origin and the last rethrow).
    /// </summary>
    internal static readonly int FailureTraceLevels = ReadInt("Myriad.FailureTraceLevels", 64, 0, 1_000_000);

    /// <summary>Reads an integer AppContext setting, clamped to [<paramref name="min"/>, <paramref name="max"/>]; <paramref name="fallback"/> when unset or unparsable.</summary>
    internal static int ReadInt(string key, int fallback, int min, int max)
    {
        object? data = AppContext.GetData(key);
        int value = data switch
        {
            int i => i,
            string s when int.TryParse(s, out int parsed) => parsed,
            _ => fallback,
        };
        return Math.Clamp(value, min, max);
    }
}
