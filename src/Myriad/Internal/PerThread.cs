using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Scheduling;

namespace Myriad.Internal;

/// <summary>
/// Everything Myriad keeps per thread, behind a single thread-static reference: the trampoline's
/// depth and deferred queue, the scheduler context, and a wake owed to a runtime. The hot paths
/// (a builder's Start, a continuation dispatch) touch several of these at once, and each separate
/// thread-static costs its own TLS lookup; one object costs one.
/// </summary>
/// <remarks>Owned by its thread: no field is ever read or written by another thread.</remarks>
internal sealed class PerThread
{
    [ThreadStatic] private static PerThread? t_current;

    /// <summary>This thread (cached: <c>Thread.CurrentThread</c> is itself a thread-static lookup).</summary>
    internal readonly Thread Thread = Thread.CurrentThread;

    /// <summary>A number unique to this thread's state, for <see cref="StripedCounter.Increment(PerThread)"/>.</summary>
    internal readonly int Stripe = Interlocked.Increment(ref s_stripes);

    private static int s_stripes;

    /// <summary>Myriad frames (Start, Dispatch) on this thread's stack; see <see cref="Jobs.Trampoline"/>.</summary>
    internal int Depth;

    /// <summary>
    /// Inline resumptions left to the scheduler item this thread runs, where its scheduler bounds
    /// them (<see cref="Scheduling.SchedulerContext.BoundsInlineRuns"/>); reset by that scheduler for
    /// every item it runs from its queue.
    /// </summary>
    internal int InlineBudget;

    /// <summary>Blocking waits on this thread's stack that run other work on top of their frame (see <c>BlockingWaiter</c>, "Stack depth").</summary>
    internal int HelpingWaits;

    /// <summary>The stack size a runtime started this thread with (a worker or spare, <c>RuntimeOptions.ThreadStackSize</c>), or 0 where unknown.</summary>
    internal int OwnStackSize;

    /// <summary>An address near the base of that stack (taken as the thread's loop began); meaningful only where <see cref="OwnStackSize"/> is set.</summary>
    internal nint OwnStackBase;

    /// <summary>Records the stack a runtime started this thread with; called first thing in the thread's loop.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    internal unsafe void RecordOwnStack(int size)
    {
        byte marker = 0;
        OwnStackBase = (nint)(&marker);
        OwnStackSize = size;
    }

    /// <summary>Work the trampoline deferred on a thread that runs no scheduler.</summary>
    internal WorkQueue? Deferred;

    /// <summary>The scheduler this thread runs, if any.</summary>
    internal SchedulerContext? Context;

    /// <summary>
    /// The id of a runtime this (plain) thread owes a worker wake-up (0: none); see the lazy-wake
    /// protocol. An id, not the runtime: a thread that spawned and never came back (a pool thread)
    /// kept a disposed runtime reachable for good through this field. A stale id resolves to
    /// nothing, or to a later runtime that reused it, which costs at most one needless notify.
    /// </summary>
    internal short PendingWake;

    /// <summary>
    /// Set while a thread that must run no user code completes cells (a runtime's watchdog in its
    /// I/O rescue poll): a detached job's failure then raises <c>UnobservedException</c> from an item
    /// queued on the runtime, rather than in the handler's code on this thread.
    /// </summary>
    internal bool RunsNoUserCode;

    /// <summary>
    /// Set while this thread runs a completion posted to <c>ResumeContext</c>: a job resumed by it
    /// is queued on its runtime, never run inside the post (<c>ForeignAwait.Resume</c>).
    /// </summary>
    internal bool QueuesForeignResumes;

    /// <summary>
    /// The failure this thread last threw out of a job's cell to its awaiter, until the thread's next
    /// failed completion takes it; see <see cref="Jobs.JobFailure"/>.
    /// </summary>
    internal Jobs.JobFailure? RethrownFailure;

    /// <summary>The trampoline <see cref="Depth"/> at which <see cref="RethrownFailure"/> was thrown.</summary>
    internal int RethrownAtDepth;

    /// <summary>A spare blocking waiter (see <see cref="Jobs.BlockingWaiter"/>), so that a blocking wait allocates nothing.</summary>
    internal Jobs.BlockingWaiter? CachedWaiter;

    /// <summary>This thread's guest-run slot of the runtime it last ran a job of inline while waiting (see <c>JobRuntime.GuestRuns.cs</c>).</summary>
    internal Scheduling.GuestSlot? GuestSlot;

    /// <summary>The per-thread stacks of <see cref="BoxPool{T}"/>, indexed by pooled type; grows on demand.</summary>
    internal PoolStack?[] Pools = [];

    private static int s_poolSlots;

    /// <summary>Hands each pooled type its index into <see cref="Pools"/>.</summary>
    internal static int NewPoolSlot() => Interlocked.Increment(ref s_poolSlots) - 1;

    /// <summary>The stack for one pooled type, created (and <see cref="Pools"/> grown) on first use.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal PoolStack GetPoolStack(int slot)
    {
        PoolStack?[] pools = Pools;
        return (uint)slot < (uint)pools.Length && pools[slot] is { } stack ? stack : CreatePoolStack(slot);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private PoolStack CreatePoolStack(int slot)
    {
        if (slot >= Pools.Length)
        {
            Array.Resize(ref Pools, Math.Max(slot + 1, Math.Max(8, Pools.Length * 2)));
        }

        return Pools[slot] = new PoolStack();
    }

    internal static PerThread Current
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => t_current ?? Create();
    }

    /// <summary>The state if this thread has one; never allocates.</summary>
    internal static PerThread? CurrentOrNull
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => t_current;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static PerThread Create() => t_current = new PerThread();
}
