using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Jobs;

/// <summary>
/// What a suspended job keeps while it awaits a Task, a ValueTask or any other non-Myriad awaiter:
/// the delegate such awaiters insist on, the job's ExecutionContext and the runtime to resume on.
/// Pooled, so that neither the delegate nor this object is allocated per await in steady state, and
/// kept out of the job's box, which would otherwise carry the delegate in every pending job (a
/// million pending jobs is the workload the box is sized for).
/// </summary>
/// <remarks>
/// <para><b>Lifetime.</b>
/// 1. At the foreign suspension the box rents one (from the suspending thread's pool), fills it,
///    parks it in its <c>_aux</c> slot and hands the awaiter <see cref="Continuation"/>.
/// 2. The awaiter calls <see cref="Continuation"/> once, on any thread. It reads the box and the
///    runtime, sends the box back to that runtime (a job must not drift off its runtime, least of all
///    off a single-threaded one) or else runs it through the trampoline, and touches nothing after
///    that: from then on another thread may run the box.
/// 3. The box, when it runs, takes the context out of this object, unparks it and returns it to the
///    pool of the thread that runs the box. With a runtime that is one of its workers, the same kind of
///    thread that rents it in step 1, so the per-thread pools stay balanced even when the awaited
///    tasks complete on thread-pool or timer threads.</para>
/// <para>The delegate is created once per object and survives pooling. An awaiter that broke its
/// contract and calls it a second time meets the hazard of every pooled continuation (the BCL's
/// pooled boxes share it): after step 3 the object may already serve another job. A call that comes
/// while the object sits in its pool finds no box and throws.</para>
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

    /// <summary>The job's non-default ExecutionContext at the suspension, or null.</summary>
    internal ExecutionContext? Context { get; private set; }

    /// <summary>Step 1.</summary>
    internal static ForeignAwait Rent(PerThread state, WorkItem box, ExecutionContext? context, JobRuntime? resumeOn)
    {
        ForeignAwait parked = s_pool.Rent(state) ?? new ForeignAwait();
        parked._box = box;
        parked.Context = context;
        parked._resumeOn = resumeOn;
        return parked;
    }

    /// <summary>The delegate to give the awaiter (step 2).</summary>
    internal Action Continuation => _continuation ??= Resume;

    /// <summary>Step 2.</summary>
    private void Resume()
    {
        // A cast, not Unsafe.As: an awaiter that broke its contract (a second call after the job
        // moved on) must fail loudly, not corrupt the heap.
        WorkItem box = _box ?? throw new InvalidOperationException("A non-Myriad awaiter called its continuation after the job had already resumed.");
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

    /// <summary>Step 3, on the thread that runs the box.</summary>
    internal void Return(PerThread state)
    {
        _box = null;
        _resumeOn = null;
        Context = null;
        s_pool.Return(state, this);
    }
}
