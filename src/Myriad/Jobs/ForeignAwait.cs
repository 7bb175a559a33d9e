using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Jobs;

/// <summary>
/// What a job keeps for its awaits on Tasks, ValueTasks and other non-Myriad awaiters: the delegate
/// such awaiters insist on, the job's ExecutionContext and the runtime to resume on. Pooled, and kept
/// out of the job's box, which would otherwise carry the delegate in every pending job (a million
/// pending jobs is the workload the box is sized for).
/// </summary>
/// <remarks>
/// <para><b>Lifetime</b> (one use of a box, from its first foreign await until it is released).
/// 1. At the box's first foreign suspension the box rents one from the suspending thread's pool,
///    binds it to itself and parks it in its <c>_aux</c> slot. From then on the object stands in for
///    that slot: the box keeps its suspension context in <see cref="Context"/>.
/// 2. At every foreign suspension the box records the context and the runtime here (<see cref="Park"/>)
///    and hands the awaiter <see cref="Continuation"/>.
/// 3. The awaiter calls <see cref="Continuation"/> once, on any thread. It reads the box and the
///    runtime, sends the box back to that runtime (a job must not drift off its runtime, least of all
///    off a single-threaded one) or else runs it through the trampoline, and touches nothing after
///    that: from then on another thread may run the box.
/// 4. The box, when it runs, takes the context back (<see cref="Unpark"/>).
/// 5. When the job's result is consumed and the box released, the box returns this object to the
///    pool of the releasing thread. That is the thread that consumes the result, usually the thread
///    that started the job and rented the box (and this object) in the first place, so the per-thread
///    pools stay balanced even when the awaited tasks complete on thread-pool or timer threads. A
///    job that fails puts its error in <c>_aux</c> and leaves this object to the garbage collector.</para>
/// <para>The delegate is created once per object and survives pooling. An awaiter that broke its
/// contract and calls it a second time meets the hazard of every pooled continuation (the BCL's
/// pooled boxes share it): the box may have moved on, or the object may serve another job already.
/// A call that comes while the object sits in its pool finds no box and throws.</para>
/// </remarks>
internal sealed class ForeignAwait
{
    private static readonly BoxPool<ForeignAwait> s_pool = BoxPool<ForeignAwait>.Shared;

    private WorkItem? _box;
    private JobRuntime? _resumeOn;
    private Action? _continuation;

    private ForeignAwait()
    {
    }

    /// <summary>The box's non-default ExecutionContext while it is suspended, or null.</summary>
    internal ExecutionContext? Context { get; set; }

    /// <summary>Step 1 (and step 2 of the first foreign suspension).</summary>
    internal static ForeignAwait Rent(PerThread state, WorkItem box, ExecutionContext? context, JobRuntime? resumeOn)
    {
        ForeignAwait foreign = s_pool.Rent(state) ?? new ForeignAwait();
        foreign._box = box;
        foreign.Park(context, resumeOn);
        return foreign;
    }

    /// <summary>Step 2.</summary>
    internal void Park(ExecutionContext? context, JobRuntime? resumeOn)
    {
        Context = context;
        _resumeOn = resumeOn;
    }

    /// <summary>The delegate to give the awaiter (step 3).</summary>
    internal Action Continuation => _continuation ??= Resume;

    /// <summary>Step 3.</summary>
    private void Resume()
    {
        WorkItem box = _box ?? throw new InvalidOperationException("A non-Myriad awaiter called its continuation after the job had moved on.");
        JobRuntime? runtime = _resumeOn;
        PerThread state = PerThread.Current;
        if (runtime is not null && state.Context?.Runtime != runtime)
        {
            runtime.Schedule(box, state);
        }
        else
        {
            Trampoline.Dispatch(state, box);
        }
    }

    /// <summary>Step 4, on the thread that runs the box: returns the context and forgets the runtime.</summary>
    internal ExecutionContext? Unpark()
    {
        ExecutionContext? context = Context;
        Context = null;
        _resumeOn = null;
        return context;
    }

    /// <summary>Step 5.</summary>
    internal void Return(PerThread state)
    {
        _box = null;
        _resumeOn = null;
        Context = null;
        s_pool.Return(state, this);
    }
}
