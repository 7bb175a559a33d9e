using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Jobs;

/// <summary>
/// What a state-machine box keeps for its awaits on Tasks, ValueTasks and other non-Myriad awaiters:
/// the delegate such awaiters insist on, the job's ExecutionContext and the runtime to resume on.
/// Created at the box's first such await and kept in the box's <c>_aux</c> slot for the rest of the
/// box's life, across pooling, instead of a delegate field in every box (a million pending jobs is
/// the workload the box is sized for, and most jobs never await a Task).
/// </summary>
/// <remarks>
/// <para><b>Protocol</b> (the object belongs to one box; it stands in for the box's <c>_aux</c> slot,
/// so the box keeps its suspension context in <see cref="Context"/>).
/// 1. At every foreign suspension the box records the context and the runtime here
///    (<see cref="Park"/>) and hands the awaiter <see cref="Continuation"/>.
/// 2. The awaiter calls <see cref="Continuation"/> once, on any thread. It reads the runtime, sends
///    the box back to that runtime (a job must not drift off its runtime, least of all off a
///    single-threaded one) or else runs it through the trampoline, and touches nothing after that:
///    from then on another thread may run the box.
/// 3. The box, when it runs, takes the context back (<see cref="Unpark"/>).
/// 4. When the box is released to its pool it keeps this object. A job that fails puts its error in
///    <c>_aux</c> and leaves this object to the garbage collector.</para>
/// <para>The delegate is created once per object. An awaiter that broke its contract and calls it a
/// second time meets the hazard of every pooled continuation (the BCL's pooling builder shares it):
/// the box may have moved on or serve another job already. Task, ValueTask and Task.Yield never do.</para>
/// </remarks>
internal sealed class ForeignAwait(WorkItem box)
{
    private JobRuntime? _resumeOn;
    private Action? _continuation;

    /// <summary>The box's non-default ExecutionContext while it is suspended, or null.</summary>
    internal ExecutionContext? Context { get; set; }

    /// <summary>Step 1.</summary>
    internal void Park(ExecutionContext? context, JobRuntime? resumeOn)
    {
        Context = context;
        _resumeOn = resumeOn;
    }

    /// <summary>The delegate to give the awaiter (step 2).</summary>
    internal Action Continuation => _continuation ??= Resume;

    /// <summary>Step 2.</summary>
    private void Resume()
    {
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

    /// <summary>Step 3, on the thread that runs the box (and step 4): returns the context and forgets the runtime.</summary>
    internal ExecutionContext? Unpark()
    {
        ExecutionContext? context = Context;
        Context = null;
        _resumeOn = null;
        return context;
    }
}
