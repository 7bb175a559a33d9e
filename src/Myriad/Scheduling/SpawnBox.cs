using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>How a <see cref="SpawnBox{TState,TResult}"/> calls its body (one box type serves all spawn overloads).</summary>
internal enum SpawnBodyKind : byte
{
    /// <summary><c>Func&lt;TState, Job&lt;TResult&gt;&gt;</c>.</summary>
    AsyncResult,

    /// <summary><c>Func&lt;TState, Job&gt;</c> (TResult is VoidResult).</summary>
    AsyncVoid,

    /// <summary><c>Action&lt;TState&gt;</c> (TResult is VoidResult).</summary>
    SyncVoid,
}

/// <summary>
/// A spawned job: its typed state and body (no closure, no boxing of value-type state), the queue
/// entry that starts it, and the completion cell its handle points at. Pooled.
/// </summary>
/// <remarks>
/// <para><b>Claim state</b> (<c>_claim</c>):</para>
/// <list type="bullet">
/// <item>a positive number, the <see cref="JobRuntime.ClaimId"/> of the runtime it was spawned on:
/// queued, not started. Exactly one of the scheduler (<see cref="Execute"/>), a blocking waiter
/// (<see cref="TryRunInline"/>) and disposal (<see cref="TryCancelUnstarted"/>) wins the exchange
/// from that number to <c>Running</c>, and each one expects the number of the runtime it acts
/// for, so a claim can only start the job on its own runtime.</item>
/// <item>0 <c>Running</c>: the body runs, or the job finished, or the box is in its pool (a new box
/// too: nothing can claim it before <see cref="Rent"/>).</item>
/// <item>-2 <c>Registering</c>: the body returned a pending job (the inner job) and the box is
/// registering itself as that job's continuation. -3 <c>Poked</c>: the same, and an
/// <see cref="Execute"/> call came in meanwhile.</item>
/// <item>-1 <c>AwaitingInner</c>: the box is registered on the inner job. No delegate and no
/// separate continuation object: a million pending spawns would pay 64 or 24 bytes each. Detached
/// spawns do not use this box at all (see <see cref="DetachedSpawn{TState}"/>).</item>
/// </list>
/// <para><b>Who calls <see cref="Execute"/>.</b> Queue entries (to start the box) and the inner
/// job's completion (to finish it) both do, and a stale entry (below) can come at any time, so the
/// call cannot tell which it is. The claim state tells it what may be done instead:
/// 1. The body returned a pending inner job: the box publishes the inner handle, then
///    <c>Registering</c>, then registers itself on the inner job (which may dispatch it at once if
///    the inner job completed meanwhile).
/// 2. An <see cref="Execute"/> that finds <c>Registering</c> or <c>Poked</c> only exchanges the state
///    to <c>Poked</c> and returns. It must not consume the inner job: a stale entry doing so before
///    the registration landed would make the registration fail as if the body had misused the job.
/// 3. Once the registration returned, the box exchanges <c>Registering</c> for
///    <c>AwaitingInner</c>. If that fails, it was poked: the poke may have been the inner job's
///    completion, which returned without finishing the box, so the box stores <c>AwaitingInner</c>
///    with a full fence and checks the inner job itself. The interlocked exchanges in steps 2 and
///    3 order the completion's publication against this check: either the poke comes after step
///    3's store (and finds <c>AwaitingInner</c>), or the check sees the completion.
/// 4. An <see cref="Execute"/> that finds <c>AwaitingInner</c> finishes the box if the inner job
///    completed: the state -1 -> 0 exchange decides between it and step 3's check, so the inner
///    result is consumed exactly once.</para>
/// <para><b>Stale entries.</b> A queue may
/// still hold a stale entry for a box after a waiter or an awaiting job (join helping) ran it
/// inline (its entry could not be taken back), and even after the box was reused. Such an entry
/// either finds the box not queued (and returns), or finds the box's new
/// spawn: it can start it only when that spawn is queued on the runtime the entry belongs to (the
/// claim expects that runtime's number; see <see cref="ExpectedClaim"/>), where that spawn is
/// queued anyway and its own entry will find the claim taken. A stale entry in another runtime's
/// queue cannot start it there (a current-thread runtime's job ran on a pool worker that way);
/// checking the runtime before claiming instead would leave a window in which the box is
/// released and reused between the check and the exchange. A stale entry that finds
/// <c>AwaitingInner</c> may finish the box (the registration is done, so that is safe), and the
/// inner job's own completion, coming later, finds the box finished or reused, as a stale entry
/// does. Completion is checked without throwing on a stale token. <see cref="Rent"/> writes the
/// claim last, publishing the other fields to whoever claims.</para>
/// </remarks>
internal sealed class SpawnBox<TState, TResult> : SourceBox<TResult>
{
    private static readonly BoxPool<SpawnBox<TState, TResult>> s_pool = BoxPool<SpawnBox<TState, TResult>>.Shared;

    private static readonly ContextCallback s_runBody = static s =>
    {
        var run = (BodyRun)s!;
        run.Failure = run.Box.InvokeBodyCatching(out run.Inner);
    };

    // Fields are shared between the two halves of a spawn's life, so that a million pending spawns
    // do not each carry what only the other half needs:
    // - _body is the body delegate until the body returns, then the box of the job it returned
    //   (the inner job), whose token is _innerToken;
    // - the ExecutionContext captured at the spawn and a cancelable token wait in the cell's _aux
    //   slot, packed (SpawnStartExtras), until the body starts (nothing else uses that slot before
    //   completion). A token field of its own would take the box from 80 to 88 bytes with 16 bytes
    //   of state (a spawned link of a chain).
    private TState _state = default!;
    private object? _body;
    private JobRuntime? _runtime;
    private int _claim;
    private short _innerToken;
    private SpawnBodyKind _kind;

    private const int Running = 0;
    private const int AwaitingInner = -1;
    private const int Registering = -2;
    private const int Poked = -3;

    // AggressiveOptimization here and below: optimized from the first call, so that one-shot
    // programs do not run the spawn path as tier-0 code (docs/design.md, "Cold runs").
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static SpawnBox<TState, TResult> Rent(PerThread thread, JobRuntime runtime, TState state, object body, SpawnBodyKind kind, CancellationToken cancellationToken)
    {
        SpawnBox<TState, TResult> box = s_pool.Rent(thread) ?? new();
        box._state = state;
        box._body = body;
        box._kind = kind;
        box._aux = SpawnStartExtras.Pack(ExecutionContextHelper.CaptureNonDefault(thread), cancellationToken);
        box._runtime = runtime;
        Volatile.Write(ref box._claim, runtime.ClaimId); // last: publishes the fields above to whoever claims
        return box;
    }

    internal override JobRuntime? OwnerRuntime => _runtime;

    // Not a spawn waiting to start: a hand-off of the inner job's outcome to the spawn's awaiters
    // (or a stale entry, which does nothing), unless the spawn is another runtime's.
    internal override bool WakesOutside(JobRuntime runtime) => Volatile.Read(ref _runtime) != runtime || Volatile.Read(ref _claim) <= 0;

    /// <summary>
    /// The claim a queue entry run on this thread may take: the number of the runtime whose thread
    /// this is, or, on a plain thread (the thread pool running a disposed runtime's leftovers), the
    /// number of the box's own runtime once that runtime is disposed. 0 (never a queued claim)
    /// otherwise.
    /// </summary>
    private int ExpectedClaim(PerThread state)
    {
        JobRuntime? here = state.Context?.Runtime;
        if (here is not null)
        {
            return here.ClaimId;
        }

        JobRuntime? owner = Volatile.Read(ref _runtime);
        return owner is { IsDisposed: true } ? owner.ClaimId : Running;
    }

    /// <summary>The queued -> Running exchange that exactly one of the scheduler, a waiter or disposal wins.</summary>
    private bool TryClaim(int expected) =>
        expected > 0 && Volatile.Read(ref _claim) == expected && Interlocked.CompareExchange(ref _claim, Running, expected) == expected;

    // Diagnostics only, a racy read: once the body returned a job, _body is that job's cell, and
    // naming it says what the spawn still waits for (a promise's job is no listed state machine).
    internal override string Describe() => _body switch
    {
        Delegate d => $"spawned {d.Method.Name}",
        JobCell inner => $"spawned job waiting for a {inner.Describe()}",
        _ => "spawned job",
    };

    // Diagnostics only, a racy read: once the body returned a pending job, the spawn waits for it.
    internal override JobCell? AwaitedCell() => IsCompletedUnchecked ? null : _body as JobCell;

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal override void Execute(PerThread state)
    {
        int claim = Volatile.Read(ref _claim);
        while (true)
        {
            switch (claim)
            {
                case > 0:
                    if (TryClaim(ExpectedClaim(state)))
                    {
                        Start(state);
                    }

                    return;
                case AwaitingInner:
                    FinishFromInner(state); // step 4
                    return;
                case Registering or Poked:
                    // Step 2: leave the inner job alone, make the registering thread look again.
                    int seen = Interlocked.CompareExchange(ref _claim, Poked, claim);
                    if (seen == claim)
                    {
                        return;
                    }

                    claim = seen;
                    break;
                default:
                    return; // Running: started, finished or pooled
            }
        }
    }

    /// <summary>
    /// Steps 3 and 4: if the inner job completed, hand its outcome on. Only once the registration
    /// on the inner job returned (the state is <c>AwaitingInner</c> only then); see the protocol above.
    /// </summary>
    private void FinishFromInner(PerThread state)
    {
        // The type test also refuses a body delegate, should this ever run before the body returned.
        short token = _innerToken;
        if (_body is JobBox<TResult> cell && cell.IsCompletedNoThrow(token)
            && Interlocked.CompareExchange(ref _claim, Running, AwaitingInner) == AwaitingInner)
        {
            _body = null;
            Complete(new Job<TResult>(cell, token), state);
        }
    }

    internal override bool TryRunInline(PerThread state)
    {
        // The waiter's handle was issued for this use of the box, so _runtime is its spawn's.
        JobRuntime? runtime = Volatile.Read(ref _runtime);
        if (runtime is null || Volatile.Read(ref _claim) != runtime.ClaimId)
        {
            return false; // claimed already (a worker started it): nothing to count
        }

        // Counted before the claim (JobRuntime.GuestRuns.cs, step 1): a draining worker that
        // finds the claim taken must also find the guest, or it could leave before the job queues
        // the rest of itself.
        GuestSlot? guest = runtime.EnterGuestRun(state);
        try
        {
            if (!TryClaim(runtime.ClaimId))
            {
                return false;
            }

            SchedulerContext? previous = runtime.EnterInlineRun(this, state);
            try
            {
                Start(state);
            }
            finally
            {
                SchedulerContext.Leave(state, previous);
            }

            return true;
        }
        finally
        {
            if (guest is not null)
            {
                JobRuntime.ExitGuestRun(guest);
            }
        }
    }

    /// <summary>
    /// Join helping (Java ForkJoin's <c>join</c>, Cilk's work-first order): a job of this runtime
    /// awaits this spawn before any worker started it, typically a parent awaiting the children it
    /// just spawned. Running the child right here saves the parent a suspension, the child a queue
    /// round trip, and keeps the child's data in this core's cache; other workers keep stealing the
    /// older entries. Only on a thread of the box's own runtime (a job never runs elsewhere) and
    /// only below the trampoline's depth limit (a chain of spawns awaited one inside the other must
    /// not grow the stack without bound). The job's queue entry is taken back or cleared when it is
    /// among this worker's newest; otherwise it stays behind and finds the claim taken.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal override bool TryHelp()
    {
        JobRuntime? runtime = Volatile.Read(ref _runtime);
        if (runtime is null || Volatile.Read(ref _claim) != runtime.ClaimId || !runtime.HelpsJoins || !Trampoline.TryEnter(out PerThread state, out int previous))
        {
            return false;
        }

        try
        {
            // Not on a guest thread (a plain thread running the job it waits for): its spawns go
            // through the injection queue, so the subtree it would take over runs slower there
            // than on the workers, which steal it.
            // Nor inside a task of a non-default TaskScheduler (async Task code on the runtime's
            // scheduler that spawns and awaits): the job would see that scheduler as its own.
            if (state.Context is not { } context || context.Runtime != runtime || context is GuestContext
                || ExecutionContextHelper.InNonDefaultTaskScheduler || !TryClaim(runtime.ClaimId))
            {
                return false;
            }

            if (state.Context is Worker worker && worker.IsCurrentThread)
            {
                worker.RemoveEntryOfClaimed(this); // the usual spawn-then-await leaves no stale entry

                // A helped job shows the worker busy, not blocked: a worker that runs a whole
                // subtree inline (a spawn tree) must not make the wake watchdog start a spare
                // thread to compete with it for the cores.
                worker.CountHelpedJob();
            }
            else if (runtime is SingleThreadRuntime single)
            {
                single.TakeBackIfNewest(this); // as above, on the runtime's one queue
            }

            Start(state);
            return true;
        }
        finally
        {
            Trampoline.Exit(state, previous);
        }
    }

    internal override bool TryCancelUnstarted()
    {
        // Only for a runtime being disposed: a stale entry in its queue must not cancel the box's
        // new spawn on another, live runtime.
        JobRuntime? runtime = Volatile.Read(ref _runtime);
        if (runtime is { IsDisposed: true } && TryClaim(runtime.ClaimId))
        {
            Finish(default!, new OperationCanceledException("The runtime was disposed before the job started."), PerThread.Current);
            return true;
        }

        return false;
    }

    /// <summary>A spawn that never started ends canceled; one that is only handing on its inner job's outcome may do that anywhere.</summary>
    internal override void Abandon()
    {
        if (!TryCancelUnstarted())
        {
            base.Abandon();
        }
    }

    private void Start(PerThread state)
    {
        ExecutionContext? context = SpawnStartExtras.Unpack(_aux, out CancellationToken cancellationToken);
        _aux = null;
        if (cancellationToken.IsCancellationRequested)
        {
            Finish(default!, ThrowHelper.Canceled(cancellationToken), state);
            return;
        }

        Job<TResult> inner;
        Exception? failure;
        if (context is null && ExecutionContextHelper.IsDefault(state))
        {
            // Undo what the body changed, its SynchronizationContext too: this may be a waiting
            // thread (TryRunInline) or a job awaiting the spawn (TryHelp), not a worker's loop,
            // which resets both after every item. ExecutionContext.Run below restores both itself.
            SynchronizationContext? sync = ExecutionContextHelper.CurrentSynchronizationContext(state);
            failure = InvokeBodyCatching(out inner);
            ExecutionContextHelper.RestoreAfterInlineRun(state, sync);
        }
        else
        {
            // Rare (a spawn under an AsyncLocal or a flowed culture): the holder is the price.
            var run = new BodyRun(this);
            ExecutionContext.Run(context ?? ExecutionContextHelper.Default, s_runBody, run);
            inner = run.Inner;
            failure = run.Failure;
        }

        // Only now, with the thread's contexts put back: completing hands the outcome to the
        // awaiter, which may resume inline right here. Completed inside the body's contexts, a job
        // that had suspended on this spawn, resumed on the worker that ran it, found the
        // SynchronizationContext and AsyncLocals the body had installed (once in a CI run).
        if (failure is not null)
        {
            Finish(default!, failure, state);
            return;
        }

        // The body has its own copy: what the state references need not live as long as this job.
        _state = default!;
        AwaitInner(inner, state);
    }

    /// <summary>Runs the body; its exception is returned, not thrown.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Exception? InvokeBodyCatching(out Job<TResult> inner)
    {
        try
        {
            inner = InvokeBody(_body!, _kind, _state);
            return null;
        }
        catch (Exception exception)
        {
            inner = default;
            return exception;
        }
    }

    /// <summary>What a body run inside <see cref="ExecutionContext.Run"/> hands back to <see cref="Start"/>.</summary>
    private sealed class BodyRun(SpawnBox<TState, TResult> box)
    {
        internal readonly SpawnBox<TState, TResult> Box = box;
        internal Job<TResult> Inner;
        internal Exception? Failure;
    }

    /// <summary>
    /// Calls a spawn's body, <paramref name="body"/> being of the delegate type that
    /// <paramref name="kind"/> names; a synchronous body's job is <c>default</c> (completed). For a
    /// queued spawn (<see cref="Start"/>) and one started inline alike.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization | MethodImplOptions.AggressiveInlining)]
    internal static Job<TResult> InvokeBody(object body, SpawnBodyKind kind, TState state)
    {
        // The kind names the delegate type exactly: JobRuntime's Spawn overloads store each body
        // with its kind (AsyncResult: Func<TState, Job<TResult>>; AsyncVoid: Func<TState, Job>;
        // SyncVoid: Action<TState>), so the casts can be unchecked. A checked cast to a type
        // that depends on TState costs a generic-dictionary lookup and a cast helper per spawn
        // in shared generic code.
        switch (kind)
        {
            case SpawnBodyKind.AsyncResult:
                return Unsafe.As<Func<TState, Job<TResult>>>(body)(state);
            case SpawnBodyKind.AsyncVoid:
                Job job = Unsafe.As<Func<TState, Job>>(body)(state);
                return Unsafe.As<Job<VoidResult>, Job<TResult>>(ref Unsafe.AsRef(in job._inner));
            default:
                Unsafe.As<Action<TState>>(body)(state);
                return default;
        }
    }

    /// <summary>
    /// A spawn whose body already ran on the spawning thread (<see cref="JobRuntime.TryStartInline{TState, TResult}"/>)
    /// and returned a pending job: a box in the state of a spawn whose body just returned, so that the
    /// spawn's completion is counted and handed on as for a queued spawn. No queue entry exists for
    /// this use of the box (a stale one from an earlier use finds it <c>Running</c> or later, see the
    /// remarks).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static Job<TResult> Adopt(PerThread thread, JobRuntime runtime, Job<TResult> inner)
    {
        SpawnBox<TState, TResult> box = s_pool.Rent(thread) ?? new();
        box._runtime = runtime;
        Volatile.Write(ref box._claim, Running);
        short token = box.Version;
        box.AwaitInner(inner, thread);
        return new Job<TResult>(box, token);
    }

    /// <summary>Steps 1 and 3 for the job the body returned (see the protocol above).</summary>
    private void AwaitInner(Job<TResult> inner, PerThread state)
    {
        try
        {
            if (inner.IsCompleted)
            {
                Complete(inner, state);
                return;
            }

            // Step 1: publish the inner handle before registering: the inner job may complete
            // (and call Execute) the moment the registration lands.
            _body = inner._box;
            _innerToken = inner._token;
            Volatile.Write(ref _claim, Registering);
            inner._box!.OnCompleted(this, inner._token, state);
        }
        catch (InvalidOperationException misuse)
        {
            // The body returned a job that was already awaited or consumed elsewhere: that is
            // this job's failure, not the worker's.
            _body = null;
            Volatile.Write(ref _claim, Running);
            Finish(default!, misuse, state);
            return;
        }

        // Step 3.
        if (Interlocked.CompareExchange(ref _claim, AwaitingInner, Registering) != Registering)
        {
            Interlocked.Exchange(ref _claim, AwaitingInner);
            FinishFromInner(state);
        }
    }

    private void Complete(Job<TResult> inner, PerThread state)
    {
        if (inner._box is not { } cell)
        {
            Finish(inner._result, null, state);
            return;
        }

        // The inner failure is handed on as it was captured: rethrown and caught here, every faulted
        // or canceled spawn threw its exception once more than its awaiter does (microseconds each:
        // a scope of 50 children that fails and cancels the rest threw 103 exceptions, not 52).
        TResult result;
        JobFailure? failure;
        try
        {
            result = cell.ConsumeOutcome(inner._token, out failure);
        }
        catch (Exception exception)
        {
            Finish(default!, exception, state); // a select's handler, run by the consumption
            return;
        }

        if (failure is null)
        {
            Finish(result, null, state);
        }
        else
        {
            Finish(failure, state);
        }
    }

    /// <summary>Completes the spawn; <paramref name="state"/> is the calling thread's (it saves the lookups of the count and the dispatch).</summary>
    private void Finish(TResult result, Exception? error, PerThread state)
    {
        Retire(state);
        if (error is null)
        {
            SetResult(result, state);
        }
        else
        {
            SetException(error, state);
        }
    }

    /// <summary>Completes the spawn with a failure captured already (the inner job's, handed on as it is).</summary>
    private void Finish(JobFailure failure, PerThread state)
    {
        Retire(state);
        SetFailure(failure, state);
    }

    /// <summary>The spawn ends: drops what the body held and counts the end, before anyone can observe the completion.</summary>
    private void Retire(PerThread state)
    {
        JobRuntime runtime = _runtime!;
        DropBody();
        runtime.OnJobCompleted(state);
    }

    /// <summary>Drops the references the body held (its state, delegate or inner job, context and token).</summary>
    private void DropBody()
    {
        _state = default!;
        _body = null;
        _aux = null; // the context and token of a spawn that never started; an error is written after this
    }

    private protected override void Release()
    {
        _runtime = null;
        ResetBox();
        s_pool.Return(this);
    }
}
