using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Jobs;

/// <summary>
/// The pooled heap home of an <c>async Job</c>/<c>async Job&lt;T&gt;</c> state machine once it
/// suspends (or once the trampoline defers its start). It is at once the job's completion cell, the
/// continuation registered on whatever it awaits, and a schedulable work item.
/// </summary>
/// <remarks>
/// <para>Lifetime: rented at the first suspension; runs <c>MoveNext</c> on every resumption; completed
/// by the builder's SetResult/SetException; reset and returned to <see cref="BoxPool{T}"/> when the
/// awaiter consumes the result. Hazard: the consumer may run (inline) before the completing
/// <c>MoveNext</c> frame has unwound and may hand the box to another job at once. The
/// compiler-generated <c>MoveNext</c> touches nothing after SetResult, and <see cref="Execute"/>
/// touches no field after it returns, so the reuse is safe (the BCL's pooling builder relies on the
/// same property).</para>
/// <para>Size matters: a million suspended jobs is the design load. While suspended, the captured
/// ExecutionContext lives in the cell's shared <c>_aux</c> slot (null when it is the default
/// context); while it awaits a Task or ValueTask, that slot holds a pooled <see cref="ForeignAwait"/>
/// instead, which carries the context.</para>
/// </remarks>
internal sealed class StateMachineBox<TStateMachine, T> : JobBox<T>
    where TStateMachine : IAsyncStateMachine
{
    private static readonly ContextCallback s_moveNext = static s => ((StateMachineBox<TStateMachine, T>)s!).StateMachine.MoveNext();

    /// <summary>The state machine, copied here at the first suspension.</summary>
    internal TStateMachine StateMachine = default!;

    internal static StateMachineBox<TStateMachine, T> Rent() => BoxPool<StateMachineBox<TStateMachine, T>>.Rent() ?? new();

    /// <summary>Records the flowing ExecutionContext before the state machine suspends.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void CaptureContext() => _aux = ExecutionContextHelper.CaptureNonDefault();

    /// <summary>Parks a <see cref="ForeignAwait"/> in <c>_aux</c> (with the context) and returns its delegate.</summary>
    internal Action GetForeignContinuation()
    {
        var foreign = ForeignAwait.Rent(this, ExecutionContextHelper.CaptureNonDefault());
        _aux = foreign;
        return foreign.Continuation;
    }

    internal override void Execute()
    {
        // Pending, _aux holds only what we parked there at suspension (see JobCell._aux).
        object? parked = _aux;
        ExecutionContext? context = parked as ExecutionContext;
        if (parked is ForeignAwait foreign)
        {
            _aux = null;
            context = foreign.TakeContextAndReturn();
        }

        if (context is null && ExecutionContextHelper.CurrentIsDefault)
        {
            StateMachine.MoveNext();
            ExecutionContextHelper.RestoreDefaultIfChanged();
        }
        else
        {
            _aux = null;
            ExecutionContext.Run(context ?? ExecutionContextHelper.Default, s_moveNext, this);
        }
    }

    internal override string Describe() => DescribeStateMachine(typeof(TStateMachine));

    internal override string? DescribeAwaiting()
    {
        if (_aux is ForeignAwait)
        {
            return "a Task, ValueTask or other non-Myriad awaitable";
        }

        JobCell? awaited = AwaitedCell();
        return awaited is null ? null : awaited.Describe();
    }

    /// <summary>
    /// Diagnostics only (reflection): the cell behind the state machine's current job awaiter. The
    /// compiler keeps the awaiter of the pending await in a field and clears it on resume, so the one
    /// non-empty job-awaiter field is what this job is suspended on.
    /// </summary>
    internal override JobCell? AwaitedCell()
    {
        object machine = StateMachine!;
        foreach (System.Reflection.FieldInfo field in typeof(TStateMachine).GetFields(System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Public))
        {
            if (field.GetValue(machine) is IJobAwaiter awaiter && awaiter.Cell is JobCell cell)
            {
                return cell;
            }
        }

        return null;
    }

    /// <summary>Turns a compiler-generated state machine name ("&lt;Link&gt;d__3") into "Declaring.Link".</summary>
    internal static string DescribeStateMachine(Type type)
    {
        string name = type.Name;
        int open = name.IndexOf('<');
        int close = name.IndexOf('>');
        string method = open >= 0 && close > open ? name.Substring(open + 1, close - open - 1) : name;
        return type.DeclaringType is null ? method : $"{type.DeclaringType.Name}.{method}";
    }

    private protected override void Release()
    {
        Diagnostics.JobDiagnostics.OnReleased(this);
        StateMachine = default!;
        ResetBox();
        BoxPool<StateMachineBox<TStateMachine, T>>.Return(this);
    }
}
