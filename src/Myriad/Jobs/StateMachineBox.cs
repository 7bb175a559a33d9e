using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>
/// The pooled heap home of an <c>async Job</c>/<c>async Job&lt;T&gt;</c> state machine once it
/// suspends (or once the trampoline defers its start). It is at once the job's completion cell, the
/// continuation registered on whatever it awaits, and a schedulable work item.
/// </summary>
/// <remarks>
/// Lifetime: rented at the first suspension; runs <c>MoveNext</c> on every resumption; completed by
/// the builder's SetResult/SetException; reset and returned to <see cref="BoxPool{T}"/> when the
/// awaiter consumes the result. Hazard: the consumer may run (inline) before the completing
/// <c>MoveNext</c> frame has unwound and may hand the box to another job at once. The compiler-generated
/// <c>MoveNext</c> touches nothing after SetResult, and <see cref="Execute"/> touches no field after it
/// returns, so the reuse is safe (the BCL's pooling builder relies on the same property).
/// </remarks>
internal sealed class StateMachineBox<TStateMachine, T> : JobBox<T>
    where TStateMachine : IAsyncStateMachine
{
    private static readonly ContextCallback s_moveNext = static s => ((StateMachineBox<TStateMachine, T>)s!).StateMachine.MoveNext();

    /// <summary>The state machine, copied here at the first suspension.</summary>
    internal TStateMachine StateMachine = default!;

    /// <summary>The ExecutionContext captured at the last suspension; null when it was the default one.</summary>
    private ExecutionContext? _context;

    /// <summary>A cached delegate for awaiters that only accept an <see cref="Action"/> (Task, ValueTask...).</summary>
    private Action? _moveNextAction;

    /// <summary>
    /// For a foreign await started on a runtime thread: the runtime to resume on. A Task completes on
    /// whatever thread the TPL chooses; resuming there would move the job off its runtime (and off
    /// the one thread of a single-threaded runtime).
    /// </summary>
    private Scheduling.JobRuntime? _resumeOn;

    internal static StateMachineBox<TStateMachine, T> Rent() => BoxPool<StateMachineBox<TStateMachine, T>>.Rent() ?? new();

    /// <summary>The delegate handed to foreign awaiters; remembers the runtime to come back to.</summary>
    internal Action GetForeignContinuation()
    {
        _resumeOn = Scheduling.SchedulerContext.Current?.Runtime;
        return _moveNextAction ??= ResumeFromForeign;
    }

    private void ResumeFromForeign()
    {
        Scheduling.JobRuntime? runtime = _resumeOn;
        if (runtime is not null)
        {
            _resumeOn = null;
            if (Scheduling.SchedulerContext.Current?.Runtime != runtime)
            {
                runtime.Schedule(this);
                return;
            }
        }

        Trampoline.Dispatch(this);
    }

    /// <summary>Records the flowing ExecutionContext before the state machine suspends.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void CaptureContext() => _context = ExecutionContextHelper.CaptureNonDefault();

    internal override void Execute()
    {
        ExecutionContext? context = _context;
        if (context is null && ExecutionContextHelper.CurrentIsDefault)
        {
            StateMachine.MoveNext();
            ExecutionContextHelper.RestoreDefaultIfChanged();
        }
        else
        {
            _context = null;
            ExecutionContext.Run(context ?? ExecutionContextHelper.Default, s_moveNext, this);
        }
    }

    private protected override void Release()
    {
        StateMachine = default!;
        _context = null;
        _resumeOn = null;
        ResetBox();
        BoxPool<StateMachineBox<TStateMachine, T>>.Return(this);
    }
}
