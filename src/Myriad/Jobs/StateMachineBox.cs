using System;
using System.Diagnostics.CodeAnalysis;
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
/// context); from an await on a Task or ValueTask until the next await on a job, that slot holds an
/// attached, pooled <see cref="ForeignAwait"/> instead, which carries the context, the runtime to
/// resume on and the delegate such awaiters need (see <see cref="GetForeignContinuation"/>); it also
/// stays with the box in the box's pool. A suspension on them then allocates nothing in steady state,
/// a job pending on a job carries nothing for them, and the box has no delegate field.</para>
/// </remarks>
// The fields stay reachable for the diagnostics that read the pending awaiter (AwaitedCell), also
// when trimmed: every builder method that passes TStateMachine on carries the same annotation.
internal sealed class StateMachineBox<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine, T> : SourceBox<T>
    where TStateMachine : IAsyncStateMachine
{
    private static readonly BoxPool<StateMachineBox<TStateMachine, T>> s_pool = BoxPool<StateMachineBox<TStateMachine, T>>.Shared;

    private static readonly ContextCallback s_moveNext = static s => ((StateMachineBox<TStateMachine, T>)s!).StateMachine.MoveNext();

    /// <summary>The state machine, copied here at the first suspension.</summary>
    internal TStateMachine StateMachine = default!;

    internal static StateMachineBox<TStateMachine, T> Rent(PerThread state) => s_pool.Rent(state) ?? new();

    // A job's box completes only in its own MoveNext (or canceled when abandoned), and its owner id
    // names the runtime it suspended on: it can carry a spawn's count (JobCell.TryMarkAsSpawn).
    private protected override bool CountsSpawns => true;

    /// <summary>Records the flowing ExecutionContext before the state machine suspends.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void CaptureContext(PerThread state)
    {
        // While the box runs, _aux is null or an attached ForeignAwait: a job pending on a job
        // carries nothing for Tasks, so detach it (step 4 of its protocol).
        ExecutionContext? context = ExecutionContextHelper.CaptureNonDefault(state);
        if (_aux is ForeignAwait foreign)
        {
            foreign.Return(state);
        }

        _aux = context;
        _ownerRuntime = SchedulerContext.RuntimeIdOf(state);
    }

    /// <summary>
    /// Prepares a suspension on a non-Myriad awaiter and returns the delegate such awaiters insist
    /// on, from the <see cref="ForeignAwait"/> attached to the box (step 1 of its protocol).
    /// </summary>
    internal Action GetForeignContinuation(PerThread state)
    {
        ExecutionContext? context = ExecutionContextHelper.CaptureNonDefault(state);
        JobRuntime? runtime = state.Context?.Runtime;
        _ownerRuntime = SchedulerContext.RuntimeIdOf(state);
        if (_aux is not ForeignAwait foreign)
        {
            foreign = ForeignAwait.Rent(state, this);
            _aux = foreign;
        }

        foreign.Park(context, runtime);
        return foreign.Continuation;
    }

    /// <summary>
    /// A suspension whose registration threw (see <c>BuilderCore.RegistrationFailed</c>): the box
    /// is not suspended after all, so nothing parked for a resume may stay.
    /// </summary>
    internal void AbandonSuspension()
    {
        if (_aux is ForeignAwait foreign)
        {
            foreign.Unpark(); // also disarms it: a late call of its continuation throws
        }
        else
        {
            _aux = null; // the context parked for a job await
        }
    }

    /// <summary>Returns a box that was rented for a suspension that did not happen; no handle to it exists.</summary>
    internal void ReturnUnused() => Release();

    internal override void Execute(PerThread state)
    {
        // Where a job runs is a contract: only on a thread of its own runtime (a job of no runtime:
        // only on a thread of none). Whoever completed what it awaited may be anybody (another
        // runtime's worker, a plain thread, a timer), so every path that runs the box checks here;
        // on its own runtime the check is two loads and a compare.
        if (_ownerRuntime != SchedulerContext.RuntimeIdOf(state))
        {
            Redirect(state);
            return;
        }

        // Pending, _aux holds only what we parked there at suspension (see JobCell._aux): nothing
        // (the default context), the context, or the attached ForeignAwait, which then holds the
        // context and stays attached (step 3 of its protocol).
        object? parked = _aux;
        ExecutionContext? context = null;
        if (parked is not null)
        {
            context = parked as ExecutionContext; // sealed: one type compare
            if (context is null)
            {
                context = ((ForeignAwait)parked).Unpark();
            }
            else
            {
                _aux = null;
            }
        }

        if (context is null && ExecutionContextHelper.IsDefault(state))
        {
            StateMachine.MoveNext();
            ExecutionContextHelper.RestoreDefaultIfChanged(state);
        }
        else
        {
            ExecutionContext.Run(context ?? ExecutionContextHelper.Default, s_moveNext, this);
        }
    }

    /// <summary>
    /// Resumes the job where it belongs: queued to its runtime, or, for a job of no runtime woken on a
    /// runtime's thread, to the .NET thread pool (code that is not a runtime's job never runs on its
    /// threads). A runtime that has finished its disposal cancels the job (<see cref="Abandon"/>).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Redirect(PerThread state)
    {
        short owner = _ownerRuntime;
        if (owner == RuntimeRegistry.Foreign)
        {
            Trampoline.RunOnThreadPool(this);
        }
        else if (RuntimeRegistry.Find(owner) is { } runtime)
        {
            runtime.ScheduleResume(this, state);
        }
        else
        {
            Abandon();
        }
    }

    /// <summary>
    /// The job's runtime finished its disposal before the job could resume: it ends canceled, so its
    /// awaiter is not stranded. Its remaining code, finally blocks included, does not run (a job never
    /// runs off its runtime, and there is no runtime left).
    /// </summary>
    /// <remarks>What woke it may have been a hand-off that raced the disposal (claimed while the
    /// runtime still ran resumes, see <see cref="JobCell.ConsumerCannotRun"/>): the cell it awaited is
    /// then complete and unconsumed, and gives back what it carries (the item, the lock) before the job
    /// ends. Found through the state machine's awaiter field: this path runs only after a disposal.</remarks>
    internal override void Abandon()
    {
        // Queued on a runtime that is gone, but the job is another's (a single-threaded runtime's
        // queue held a resume its jobs made for a job of a live runtime): send it home instead.
        short owner = _ownerRuntime;
        if (owner == RuntimeRegistry.Foreign)
        {
            Trampoline.RunOnThreadPool(this);
            return;
        }

        if (!RuntimeRegistry.RefusesResumes(owner) && RuntimeRegistry.Find(owner) is { IsDisposed: false } home)
        {
            home.ScheduleResume(this, PerThread.Current); // a home disposed meanwhile abandons it again, and then refuses
            return;
        }

        // A Myriad cell awaited through a ValueTask: its completion disarmed the resume on the way
        // here, so the pending cell is the one the resume came from.
        if (!IsCompletedUnchecked && (AwaitedCell() ?? (_aux as ForeignAwait)?.ResumedFrom) is { IsCompletedUnchecked: true } awaited)
        {
            awaited.GiveBackUnconsumed();
        }

        TrySetException(new OperationCanceledException("The job's runtime was disposed before the job could resume; the rest of the job did not run."));
    }

    internal override bool WakesOutside(JobRuntime runtime) => _ownerRuntime != runtime.Id; // it only goes home (Redirect)

    internal override bool IsJobOfNoRuntime => _ownerRuntime == RuntimeRegistry.Foreign;

    /// <summary>The runtime the job belongs to (a blocking wait on a single-threaded one's job drives it); null for a job of none.</summary>
    internal override JobRuntime? OwnerRuntime => RuntimeRegistry.Find(_ownerRuntime);

    internal override string Describe() => DescribeStateMachine(typeof(TStateMachine));

    internal override string? DescribeAwaiting()
    {
        if (IsRunningBetweenAwaits())
        {
            return "nothing: it is running (between two awaits; blocked in a wait, say)";
        }

        if (AwaitsForeign())
        {
            return "a Task, ValueTask or other non-Myriad awaitable";
        }

        JobCell? awaited = AwaitedCell();
        return awaited is null ? null : awaited.Describe();
    }

    /// <summary>
    /// Diagnostics only (reflection): the cell behind the state machine's current job awaiter. The
    /// compiler keeps the awaiter of the pending await in a field and clears it on resume, so the one
    /// non-empty job-awaiter field is what this job is suspended on. For a Myriad cell awaited
    /// through a <c>ValueTask</c>, the cell its resume is registered on.
    /// </summary>
    internal override JobCell? AwaitedCell()
    {
        object? machine = StateMachine;
        if (machine is null)
        {
            return null;
        }

        foreach (System.Reflection.FieldInfo field in typeof(TStateMachine).GetFields(System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Public))
        {
            if (field.GetValue(machine) is IJobAwaiter awaiter && awaiter.Cell is JobCell cell)
            {
                return cell;
            }
        }

        // A Myriad cell awaited through a ValueTask: the job's resume is registered on it directly.
        return (_aux as ForeignAwait)?.PendingCell;
    }

    /// <summary>
    /// Diagnostics only (reflection): whether the pending await is on a non-Myriad awaiter: the
    /// state machine is suspended at an await and no job-awaiter field holds a pending cell. Read
    /// from the state machine rather than kept in a flag: a flag would cost every box 8 bytes.
    /// </summary>
    private bool AwaitsForeign()
    {
        // Suspended (state >= 0) on an await whose awaiter is not a job awaiter. Field values
        // cannot tell: Task.Yield's awaiter has no fields, so it reads as empty.
        object? machine = StateMachine;
        if (machine is null)
        {
            return false; // a class state machine (Debug build) of a box already released
        }

        return StateOf(machine) is >= 0 && AwaitedCell() is null;
    }

    /// <summary>
    /// Diagnostics only (reflection): the compiler's state is -1 while the method runs, and the
    /// await's number (0 or more) while it is suspended there. Only a job tracked since an earlier
    /// suspension asks, so -1 is a resumed job, never one that has not started.
    /// </summary>
    internal override bool IsRunningBetweenAwaits() => StateOf(StateMachine) == -1;

    private static int? StateOf(object? machine) =>
        machine is null ? null : typeof(TStateMachine).GetField("<>1__state", System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Public)?.GetValue(machine) as int?;

    /// <summary>Turns a compiler-generated state machine name ("&lt;Link&gt;d__3") into "Declaring.Link" (local functions and lambdas included).</summary>
    internal static string DescribeStateMachine(Type type) => Diagnostics.CompilerNames.DescribeStateMachine(type);

    private protected override void Release()
    {
        Diagnostics.JobDiagnostics.OnReleased(this);
        StateMachine = default!;
        if (_aux is ForeignAwait foreign)
        {
            // Step 5 of its protocol: it stays with the box in the box's pool.
            foreign.Unpark();
            ResetBoxKeepingAux();
        }
        else
        {
            ResetBox(); // after a failure the error took the slot (the ForeignAwait went back to a pool first)
        }

        s_pool.Return(this);
    }
}
