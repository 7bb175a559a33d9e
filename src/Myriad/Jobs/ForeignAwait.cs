using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Jobs;

/// <summary>
/// What a suspended job needs while it awaits a Task, a ValueTask or any other non-Myriad awaiter:
/// the delegate those awaiters insist on, the ExecutionContext to resume in, and the runtime the
/// await started on. Pooled, and parked in the box's <c>_aux</c> slot only for the duration of one
/// foreign await, so that boxes pay nothing for it the rest of the time.
/// </summary>
/// <remarks>
/// Lifetime:
/// 1. The builder rents one, fills it and stores it in the box's <c>_aux</c>; the awaiter gets
///    <see cref="Continuation"/>.
/// 2. The awaiter invokes the continuation once, on whatever thread completed the Task.
///    <see cref="Resume"/> sends the box back to its runtime when it was started on one (a job must
///    not drift off its runtime, least of all off a single-threaded one), else runs it through the
///    trampoline.
/// 3. The box's <c>Execute</c> takes the context out and returns this object to the pool. Nothing
///    reads it afterwards: <see cref="Resume"/> touches no field after dispatching.
/// </remarks>
internal sealed class ForeignAwait
{
    private WorkItem? _box;
    private JobRuntime? _resumeOn;

    private ForeignAwait() => Continuation = Resume;

    internal Action Continuation { get; }

    internal ExecutionContext? Context { get; private set; }

    internal static ForeignAwait Rent(WorkItem box, ExecutionContext? context)
    {
        ForeignAwait foreign = BoxPool<ForeignAwait>.Rent() ?? new ForeignAwait();
        foreign._box = box;
        foreign.Context = context;
        foreign._resumeOn = SchedulerContext.Current?.Runtime;
        return foreign;
    }

    /// <summary>Step 3: hands back the context and recycles this object.</summary>
    internal ExecutionContext? TakeContextAndReturn()
    {
        ExecutionContext? context = Context;
        _box = null;
        _resumeOn = null;
        Context = null;
        BoxPool<ForeignAwait>.Return(this);
        return context;
    }

    private void Resume()
    {
        WorkItem box = _box!;
        JobRuntime? runtime = _resumeOn;
        if (runtime is not null && SchedulerContext.Current?.Runtime != runtime)
        {
            runtime.Schedule(box);
        }
        else
        {
            Trampoline.Dispatch(box);
        }
    }
}
