using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Jobs;

/// <summary>
/// What a suspended job keeps while it awaits a Task, a ValueTask or any other non-Myriad awaiter:
/// the delegate such awaiters insist on, the job's ExecutionContext and the runtime to resume on.
/// Pooled, so that neither this object nor its delegate is allocated per await in steady state, and
/// kept out of the job's box, which would otherwise carry the delegate in every pending job (a million
/// pending jobs is the workload the box is sized for, and most jobs never await a Task).
/// </summary>
/// <remarks>
/// <para><b>Protocol.</b> While attached, the object stands in for the box's <c>_aux</c> slot: the box
/// keeps its suspension context in <see cref="Context"/>.
/// 1. At a foreign suspension the box attaches one if it has none (rented from the suspending
///    thread's pool and parked in <c>_aux</c>), records the context and the runtime
///    (<see cref="Park"/>) and hands the awaiter <see cref="Continuation"/>.
/// 2. The awaiter calls <see cref="Continuation"/> once, on any thread. It takes the runtime (clearing
///    it, so that a second call fails loudly instead of running the box twice), sends the box back to
///    that runtime (a job must not drift off its runtime, least of all off a single-threaded one) or
///    else runs it through the trampoline, and touches nothing after that: from then on another
///    thread may run the box.
/// 3. The box, when it runs, takes the context back (<see cref="Unpark"/>) and stays attached, so a
///    loop of Task awaits rents once.
/// 4. The box detaches it and returns it to the pool of the thread it is on when it next suspends on
///    a Myriad job (a job pending on a job carries nothing for Tasks) and when it is released. Both
///    happen on threads that also rent: the thread running the job, and the thread that consumes its
///    result (usually the one that started it). Returning it from the thread that completed the task
///    would strand it in a thread-pool or timer thread's pool whenever a plain thread starts the jobs.
///    A job that fails puts its error in <c>_aux</c> and leaves this object to the garbage collector.</para>
/// <para>The delegate is created once per object and survives pooling.</para>
/// </remarks>
internal sealed class ForeignAwait
{
    private static readonly BoxPool<ForeignAwait> s_pool = BoxPool<ForeignAwait>.Shared;

    /// <summary>What <see cref="_resume"/> holds for a job that runs on no runtime.</summary>
    private static readonly object s_noRuntime = new();

    private WorkItem? _box;

    /// <summary>Between steps 1 and 2: the runtime to resume on, or <see cref="s_noRuntime"/>; null otherwise.</summary>
    private object? _resume;

    private Action? _continuation;

    private ForeignAwait()
    {
    }

    /// <summary>The box's non-default ExecutionContext while it is suspended, or null.</summary>
    internal ExecutionContext? Context { get; set; }

    /// <summary>Step 1: attach.</summary>
    internal static ForeignAwait Rent(PerThread state, WorkItem box)
    {
        ForeignAwait foreign = s_pool.Rent(state) ?? new ForeignAwait();
        foreign._box = box;
        return foreign;
    }

    /// <summary>Step 1: record what the resume needs.</summary>
    internal void Park(ExecutionContext? context, JobRuntime? resumeOn)
    {
        Context = context;
        _resume = (object?)resumeOn ?? s_noRuntime;
    }

    /// <summary>The delegate to give the awaiter (step 2).</summary>
    internal Action Continuation => _continuation ??= Resume;

    /// <summary>Step 2.</summary>
    private void Resume()
    {
        object? resume = _resume;
        WorkItem? box = _box;
        if (resume is null || box is null)
        {
            throw new InvalidOperationException("A non-Myriad awaiter called its continuation twice, or after the job it resumes had moved on.");
        }

        _resume = null; // before the dispatch: the box may suspend again and park anew right after it
        var runtime = resume as JobRuntime;
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

    /// <summary>Step 3, on the thread that runs the box: returns the context.</summary>
    internal ExecutionContext? Unpark()
    {
        ExecutionContext? context = Context;
        Context = null;
        return context;
    }

    /// <summary>Step 4: detach.</summary>
    internal void Return(PerThread state)
    {
        _box = null;
        _resume = null;
        Context = null;
        s_pool.Return(state, this);
    }
}
