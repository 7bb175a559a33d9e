using System;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>
/// The completion cell behind every pending <see cref="Job"/> and <see cref="Job{T}"/>: an error or
/// (in <see cref="JobBox{T}"/>) a result, one continuation, and a version token that makes every
/// handle single-use.
/// </summary>
/// <remarks>
/// <para><b>State.</b> All completion state lives in <see cref="_continuation"/>:</para>
/// <list type="bullet">
/// <item><c>null</c>: pending, nobody waits yet.</item>
/// <item>a continuation (<see cref="WorkItem"/>, <see cref="Action"/> or <see cref="CellObserver"/>):
/// pending, one awaiter registered. Only one may ever be registered per version.</item>
/// <item><see cref="s_completed"/>: completed; the outcome is visible. Once set it is never unset
/// until the box is reset for reuse, which only happens after the outcome was consumed.</item>
/// <item><see cref="s_spawnMark"/>: pending, nobody waits yet, and the completion also counts the end
/// of a spawned job (see <see cref="TryMarkAsSpawn"/>). It stands for null in both protocols below;
/// a registrant that replaces it first sets the count-owed bit of <see cref="_version"/>, which
/// carries the duty to the completer.</item>
/// </list>
/// <para><b>Completion protocol.</b>
/// 1. The completer writes the result or the error.
/// 2. It publishes <see cref="s_completed"/> in <see cref="_continuation"/>: by compare-exchange
///    from null while nobody waits, or by a release store once a continuation is registered (no
///    one else may write the field then). Either way the writes of step 1 are visible to anyone
///    who sees the sentinel.
/// 3. If the exchange returned a continuation, the completer dispatches it through the
///    <see cref="Trampoline"/>: inline while the stack is shallow, queued when it is deep. A
///    <see cref="CellObserver"/> is called inline instead (it runs no nested user code).</para>
/// <para><b>Registration protocol.</b>
/// 1. The awaiter compare-exchanges its continuation into a null <see cref="_continuation"/>.
/// 2. If that found <see cref="s_completed"/>, completion won the race: the awaiter dispatches its
///    own continuation (nobody else knows of it).
/// 3. If it found another continuation, the job is awaited twice: <see cref="InvalidOperationException"/>.
/// Whichever of the two exchanges runs second sees the other's write, so a continuation is never
/// lost and never run twice.</para>
/// <para><b>Versioning.</b> Every entry point checks the caller's token against the version.
/// Consuming the outcome releases the cell: a pooled box is reset and its version incremented before
/// it goes back to its pool, so a stale handle fails loudly instead of reading another job's result,
/// until the version wraps: after 32,768 uses of one cell (15 bits; the lowest bit of the field is
/// the count-owed flag, see <see cref="CountOwedBit"/>). Code that keeps a handle across
/// uses of its cell (a withdraw of a waiting receive, say) cannot rely on the version alone (see
/// <c>Chan{T}.TryWithdrawReceiver</c>). Consuming checks the token, it does not claim the use: a
/// compare-exchange claim would make two consumers racing on a completed cell (a misuse, in the
/// window between the completion and the registered consumer's continuation) exclusive, but it put
/// a locked instruction on every consumption, 8-23% on a cross-core ping-pong of jobs (measured,
/// and left out). As for a <see cref="System.Threading.Tasks.ValueTask"/> consumed twice, that
/// race's outcome is undefined; what is defined is that nothing throws into the thread that
/// completes the job (see <c>TaskBridge.Execute</c>).</para>
/// <para>Public only because <see cref="Channels.Chan{T}"/> derives from it: a channel is also the
/// completion cell of its first waiting receiver (see <see cref="Channels.Chan{T}"/>). It has no public
/// members and cannot be derived from outside Myriad.</para>
/// </remarks>
[System.ComponentModel.EditorBrowsable(System.ComponentModel.EditorBrowsableState.Never)]
public abstract class JobCell : WorkItem
{
    private protected JobCell()
    {
    }

    /// <summary>Marks a completed cell. Compared by reference only.</summary>
    internal static readonly object s_completed = new();

    private object? _continuation;

    /// <summary>
    /// Two uses sharing one field to keep a pending job small (a million pending jobs is the workload
    /// this type exists for). Derived types may park state here (a state-machine box keeps the
    /// ExecutionContext of its suspension, cleared on resume, or, from an await on a Task until its
    /// next await on a job, an attached ForeignAwait that holds that context, and that stays with the
    /// box in its pool). At completion a failure replaces it with its
    /// <see cref="JobFailure"/>; a success leaves it as it is, so readers of the outcome
    /// look only for a <see cref="JobFailure"/>.
    /// </summary>
    private protected object? _aux;
    private short _version;

    /// <summary>
    /// The lowest bit of <see cref="_version"/>, which is not part of the token (tokens step by 2):
    /// set by the registrant that replaced <see cref="s_spawnMark"/>, it says that the completer still
    /// owes the count of a spawned job's end. Written before that registrant's exchange and read by
    /// the completer after it read the continuation, so the exchange orders the two; cleared by
    /// whoever counts, before the completion is published, so a reset never races it (except under
    /// the undefined race of two consumers). Kept in the version's bits because a cell has no byte
    /// to spare: a bool field would add 8 bytes to every spawn box and to many state-machine boxes.
    /// </summary>
    private const short CountOwedBit = 1;

    /// <summary>
    /// For a job (a state-machine box): the id of the runtime it belongs to
    /// (<see cref="Scheduling.RuntimeRegistry"/>), <see cref="Scheduling.RuntimeRegistry.Foreign"/> for
    /// a job that runs outside every runtime, or 0 for a cell that runs no user code of its own. A
    /// cell that stands in for the job awaiting it (a channel's <c>await foreach</c> range) records
    /// that job's runtime here too, so that a hand-off skips it once that runtime refuses resumes.
    /// Written by the job's own thread at each suspension, read by whoever resumes it. A short so
    /// that it fits in the padding after <see cref="_version"/>: pending jobs do not grow.
    /// </summary>
    private protected short _ownerRuntime;

    /// <summary>
    /// Marks a pending cell with no awaiter as a spawned job whose completion counts on its runtime
    /// (<see cref="Scheduling.JobRuntime"/>'s completed count), so that a spawn started inline whose body
    /// suspended can hand out the body's own job instead of a spawn box wrapped around it (one object
    /// and one hand-off per pending spawn fewer). See <see cref="TryMarkAsSpawn"/>.
    /// </summary>
    internal static readonly object s_spawnMark = new();

    /// <summary>The token that handles to the current use of this cell carry.</summary>
    internal short Version => (short)(_version & ~CountOwedBit);

    /// <summary>Whether <paramref name="token"/> names the current use of this cell.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool IsCurrent(short token) => ((token ^ _version) & ~CountOwedBit) == 0;

    private bool CountOwed => (_version & CountOwedBit) != 0;

    private void SetCountOwed(bool owed) => _version = (short)(owed ? _version | CountOwedBit : _version & ~CountOwedBit);

    internal bool IsCompletedUnchecked => ReferenceEquals(Volatile.Read(ref _continuation), s_completed);

    /// <summary>True when the token is current and the cell completed; false for a stale token.</summary>
    internal bool IsCompletedNoThrow(short token) => IsCurrent(token) && IsCompletedUnchecked;

    internal bool IsCompleted(short token)
    {
        ValidateToken(token);
        return IsCompletedUnchecked;
    }

    /// <summary>The failure, once completed; null while pending or after success.</summary>
    private protected JobFailure? Error => IsCompletedUnchecked ? _aux as JobFailure : null;

    internal Exception? ErrorUnchecked => Error?.Exception;

    /// <summary>Completes with an exception (cancellation is an <see cref="OperationCanceledException"/>).</summary>
    internal bool TrySetException(Exception exception) => TrySetException(exception, null);

    /// <summary>
    /// <see cref="TrySetException(Exception)"/> for a caller that holds the calling thread's state
    /// (null: it is looked up when needed). Passing it saves the thread-static lookups of the
    /// completion (here and in <see cref="SignalCompletion"/>): a few nanoseconds each, on every
    /// completion of the spawn and scheduler paths.
    /// </summary>
    internal bool TrySetException(Exception exception, PerThread? state) => !IsCompletedUnchecked && TrySetFailure(JobFailure.Capture(exception), state);

    /// <summary>
    /// Completes with a failure captured already: a cell that hands on another cell's outcome (a
    /// spawn box and the job its body returned) passes it as it is, with no rethrow, no new capture
    /// and no trace level of its own.
    /// </summary>
    internal bool TrySetFailure(JobFailure failure, PerThread? state)
    {
        if (IsCompletedUnchecked)
        {
            return false;
        }

        // The error takes the _aux slot. A state-machine box that awaited a Task since its last await
        // on a job has a ForeignAwait attached there; it goes back to the pool first instead of to
        // the garbage collector (step 5 of its protocol). Only the box's own MoveNext fails a box,
        // on the thread running it, which is the thread step 4 returns it to as well.
        if (_aux is ForeignAwait foreign)
        {
            foreign.Return(state ?? PerThread.Current);
        }

        _aux = failure;
        SignalCompletion(state);
        return true;
    }

    internal void SetException(Exception exception) => SetException(exception, null);

    /// <summary><see cref="SetException(Exception)"/> for a caller that holds the calling thread's state (null: looked up when needed).</summary>
    internal void SetException(Exception exception, PerThread? state)
    {
        if (!TrySetException(exception, state))
        {
            ThrowHelper.ThrowAlreadyCompleted();
        }
    }

    /// <summary><see cref="TrySetFailure"/> that throws if the cell completed already.</summary>
    internal void SetFailure(JobFailure failure, PerThread? state)
    {
        if (!TrySetFailure(failure, state))
        {
            ThrowHelper.ThrowAlreadyCompleted();
        }
    }

    /// <summary>
    /// Step 2 and 3 of the completion protocol; the outcome must already be written.
    /// <paramref name="state"/>: the calling thread's state, or null to look it up if needed.
    /// </summary>
    private protected void SignalCompletion(PerThread? state = null)
    {
        // Once a continuation is registered, nobody else may write the field (a second registrant's
        // compare-exchange fails), so the sentinel can be published with a release store and the
        // interlocked exchange is only needed while nobody waits (the BCL's
        // ManualResetValueTaskSourceCore makes the same saving).
        object? continuation = Volatile.Read(ref _continuation);
        if (continuation is null)
        {
            continuation = Interlocked.CompareExchange(ref _continuation, s_completed, null);
            if (continuation is null)
            {
                return;
            }
        }

        if (ReferenceEquals(continuation, s_spawnMark) || CountOwed)
        {
            continuation = CompleteSpawn(continuation, state);
            if (continuation is null)
            {
                return;
            }
        }

        Debug.Assert(!ReferenceEquals(continuation, s_completed), "completed twice");
        short token = Version; // this use's, read before anybody can consume it
        Volatile.Write(ref _continuation, s_completed);
        DispatchContinuation(continuation, token, state);
    }

    /// <summary>
    /// Completion of a cell marked by <see cref="TryMarkAsSpawn"/>: counts the spawned job's end on
    /// its runtime, before anyone can see the completion (as a spawn box does), then publishes the
    /// completion if nobody waits. Returns the continuation to dispatch, or null when nobody waits.
    /// Only the completer runs this, so the count is taken once:
    /// 1. the continuation read is the mark: count, then exchange the mark for the completion; if a
    ///    registrant replaced the mark meanwhile, it set <see cref="CountOwedBit"/> first, which is
    ///    cleared here (counted already) and its continuation dispatched;
    /// 2. the continuation read is a registrant's, who replaced the mark and set the flag before
    ///    its exchange (seen, since the read came after that exchange): clear the flag and count.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private object? CompleteSpawn(object continuation, PerThread? state)
    {
        SetCountOwed(false);
        state ??= PerThread.Current;
        Scheduling.RuntimeRegistry.FindForCount(_ownerRuntime)?.OnJobCompleted(state);
        if (!ReferenceEquals(continuation, s_spawnMark))
        {
            return continuation; // step 2
        }

        object? seen = Interlocked.CompareExchange(ref _continuation, s_completed, s_spawnMark);
        if (ReferenceEquals(seen, s_spawnMark))
        {
            return null; // nobody waits
        }

        SetCountOwed(false); // step 1, replaced meanwhile: the registrant's flag is spent
        return seen;
    }

    /// <summary>
    /// For a spawn started inline whose body returned this pending cell: marks it (see
    /// <see cref="s_spawnMark"/>) so that its completion counts the spawn's end. False, with
    /// nothing marked, when the cell cannot carry the count (not a job of
    /// <paramref name="runtimeId"/>'s runtime), completed meanwhile, or has an awaiter already (the
    /// body handed its job to somebody else too); the caller then wraps it in a spawn box.
    /// </summary>
    internal bool TryMarkAsSpawn(short runtimeId) =>
        CountsSpawns && _ownerRuntime == runtimeId && Interlocked.CompareExchange(ref _continuation, s_spawnMark, null) is null;

    /// <summary>
    /// Whether <see cref="TryMarkAsSpawn"/> may mark this cell: only a job's own state machine, whose
    /// owner id names the runtime it suspended on and whose completion is its own.
    /// </summary>
    private protected virtual bool CountsSpawns => false;

    /// <summary>
    /// Step 3: an observer is told inline (it runs no nested user code); code that is not a job and
    /// waits on a channel or a primitive goes to the thread pool when the completer is a plain thread
    /// (see <see cref="ResumesForeignWaitersAsynchronously"/>); anything else goes through the trampoline.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void DispatchContinuation(object continuation, short token, PerThread? state)
    {
        if (continuation is CellObserver observer)
        {
            if (observer.CompletesOtherCells)
            {
                Trampoline.Notify(state ?? PerThread.Current, observer, this, token);
            }
            else
            {
                observer.OnCellCompleted(this, token);
            }

            return;
        }

        // The thread-static lookup is the one Trampoline.Dispatch makes anyway; on a runtime's
        // thread (the hot path) one more load and branch is all this adds.
        state ??= PerThread.Current;
        if (state.Context is null && ResumesForeignWaitersAsynchronously)
        {
            DispatchOnPlainThread(continuation, state);
            return;
        }

        Trampoline.Dispatch(state, continuation);
    }

    /// <summary>A waiter cell of a channel or primitive completed on a thread of no runtime: code that is not a runtime's job goes to the thread pool.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DispatchOnPlainThread(object continuation, PerThread state)
    {
        if (!ForeignContinuation.TryRunAsynchronously(continuation))
        {
            Trampoline.Dispatch(state, continuation); // a runtime's job: it goes home
        }
    }

    /// <summary>
    /// Whether code that is not a runtime's job (plain <c>async Task</c> code, a <c>ValueTask</c>
    /// awaiter, a job of no runtime started by a direct call) and awaits this cell resumes on the
    /// thread pool, or on its captured context, also when the thread that completes the cell belongs
    /// to no runtime; otherwise it resumes inline there, as after a <c>TaskCompletionSource</c>
    /// without <c>RunContinuationsAsynchronously</c>. True for
    /// the waiters of channels, selects and coordination primitives: their completer is a sender or
    /// a releaser, whose <c>TrySend</c> or <c>Release</c> must not run the waiting code inside the call
    /// (a consumer that then waits for the producer would wait on its own thread), which is why
    /// <c>System.Threading.Channels</c> and <c>SemaphoreSlim</c> resume asynchronously by default.
    /// Jobs awaiting the cell are not affected: they resume on their own runtime either way.
    /// </summary>
    private protected virtual bool ResumesForeignWaitersAsynchronously => false;

    /// <summary>Whether this is a job that belongs to no runtime (an <c>async Job</c> method called directly on a plain thread), which resumes inline on a plain thread.</summary>
    internal virtual bool IsJobOfNoRuntime => false;

    /// <summary>
    /// For a <see cref="CellObserver"/>: takes the failure (null on success), discards any result and
    /// releases the cell, which the observer's registration consumed. If another consumer took the
    /// outcome first (a misuse: the handle was also awaited or waited on), the failure is that misuse.
    /// </summary>
    internal Exception? ConsumeForObserver(short token)
    {
        if (!IsCompletedNoThrow(token))
        {
            return ThrowHelper.ConsumedTwice();
        }

        Exception? error = ErrorUnchecked;
        Release();
        return error;
    }

    /// <summary>
    /// The claim-time check of every hand-off (a channel item, a select case, a lock or a permit given
    /// to a waiter): true when the job registered to resume on this waiting cell belongs to a runtime
    /// that will never run it again (<see cref="Scheduling.RuntimeRegistry.RefusesResumes"/>).
    /// </summary>
    /// <remarks>
    /// <para>Such a job would only be woken to end canceled (see <c>StateMachineBox.Redirect</c>), and
    /// what it was handed would go with it: the item would be gone, the lock held forever. So the
    /// claimer treats the waiter as canceled instead: it completes it canceled
    /// (<see cref="CancelConsumerLater"/>) and hands the item or lock to the next waiter, or keeps it.</para>
    /// <para>Cost on the hand-off path: one load (<see cref="Scheduling.RuntimeRegistry.AnyRefusing"/>,
    /// false in a process that never disposed a runtime); past that gate, the continuation (a field the
    /// completion reads next anyway), a type test, the job's runtime id and one byte of the registry.
    /// A continuation that is not a job
    /// (a plain thread's await, a <c>Task</c>) and a waiter whose job has not registered yet (it is
    /// still running, on its runtime's thread, towards its suspension) count as able to run.</para>
    /// <para>Window: the check is not atomic with the resume. A runtime whose disposal reaches the
    /// point of refusing resumes between the claim and the moment the woken job is queued back to it
    /// (a hand-off from another thread, racing the exit of the runtime's last worker) abandons a job
    /// that holds what it was handed; the job then gives it back (<see cref="GiveBackUnconsumed"/>).
    /// Not covered: a job that awaits the waiter through a Task or a combinator (the claim sees no
    /// job, and the abandoned job's awaited cell is not the waiter). The disposal completes only after
    /// such give-backs (<c>MultiThreadRuntime.FinishDisposal</c>).</para>
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool ConsumerCannotRun() =>
        Scheduling.RuntimeRegistry.AnyRefusing
        && Volatile.Read(ref _continuation) is JobCell job && Scheduling.RuntimeRegistry.RefusesResumes(job._ownerRuntime);

    /// <summary>
    /// For a waiter that <see cref="ConsumerCannotRun"/> made its claimer skip: completes it with
    /// <see cref="OperationCanceledException"/> on the thread pool (the claimer holds its host's lock,
    /// and a completion runs continuations). Its job then ends canceled as every job woken after its
    /// runtime's disposal does, so its awaiter is not stranded. The claimer must hold the claim.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void CancelConsumerLater() =>
        ThreadPool.UnsafeQueueUserWorkItem(
            static cell => cell.TrySetException(new OperationCanceledException("The job's runtime was disposed before the job could resume; what was handed to it went to the next waiter instead.")),
            this,
            preferLocal: false);

    /// <summary>
    /// Closes the window <see cref="ConsumerCannotRun"/> leaves: this completed cell handed something
    /// (an item, a lock, a permit) to a job that was then abandoned instead of resumed, so its outcome
    /// will never be consumed. A hand-off cell gives it back to its host (the next waiter gets it, or
    /// the host keeps it); the default has nothing to give back. Called once, by the abandoned job,
    /// with no lock held.
    /// </summary>
    internal virtual void GiveBackUnconsumed()
    {
    }

    /// <summary>Registers the one continuation (a <see cref="WorkItem"/> or an <see cref="Action"/>).</summary>
    internal void OnCompleted(object continuation, short token) => OnCompleted(continuation, token, PerThread.CurrentOrNull);

    /// <summary><see cref="OnCompleted(object, short)"/> for a caller that holds the calling thread's state (or null).</summary>
    internal void OnCompleted(object continuation, short token, PerThread? state)
    {
        if (!TryOnCompleted(continuation, token, state))
        {
            ThrowRegistrationRefused(token);
        }
    }

    /// <summary>
    /// Registration steps 1 and 2 without throwing: false, with nothing registered, when the token is
    /// stale or another continuation is registered (step 3; <see cref="ThrowRegistrationRefused"/> says which).
    /// </summary>
    internal bool TryOnCompleted(object continuation, short token) => TryOnCompleted(continuation, token, PerThread.CurrentOrNull);

    /// <summary>
    /// <see cref="TryOnCompleted(object, short)"/> for a caller that holds the calling thread's state
    /// (null: none yet, or not at hand): every suspension registers, and a thread-static lookup saved
    /// here is saved on each of them.
    /// </summary>
    internal bool TryOnCompleted(object continuation, short token, PerThread? state)
    {
        if (!IsCurrent(token))
        {
            return false;
        }

        Scheduling.MultiThreadRuntime.PayOwedWake(state); // an asynchronous wait: the owner will not run it inline
        object? previous = Interlocked.CompareExchange(ref _continuation, continuation, null);
        if (previous is null)
        {
            return true;
        }

        if (ReferenceEquals(previous, s_completed))
        {
            DispatchContinuation(continuation, token, state);
            return true;
        }

        return ReferenceEquals(previous, s_spawnMark) && ReplaceSpawnMark(continuation, token, state);
    }

    /// <summary>
    /// Registration on a cell marked by <see cref="TryMarkAsSpawn"/>: the count passes to the
    /// completer through <see cref="CountOwedBit"/>, set before the exchange that publishes this
    /// continuation. If the completer took the mark first, it counted; the flag is taken back and
    /// the continuation dispatched as for a completed cell. If another registrant took it (a job
    /// awaited twice), the flag is that registrant's as well and stays: clearing it lost the count.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool ReplaceSpawnMark(object continuation, short token, PerThread? state)
    {
        SetCountOwed(true);
        object? seen = Interlocked.CompareExchange(ref _continuation, continuation, s_spawnMark);
        if (ReferenceEquals(seen, s_spawnMark))
        {
            return true;
        }

        if (ReferenceEquals(seen, s_completed))
        {
            SetCountOwed(false); // the completer took the mark, and counted
            DispatchContinuation(continuation, token, state);
            return true;
        }

        // Another registrant won (the job is awaited twice): the bit it set is its, and the
        // completer still owes the count, so it stays.
        return false;
    }

    /// <summary>The exception for a registration <see cref="TryOnCompleted(object, short)"/> refused.</summary>
    [DoesNotReturn]
    internal void ThrowRegistrationRefused(short token)
    {
        ValidateToken(token);
        ThrowHelper.ThrowAwaitedTwice();
        throw new UnreachableException();
    }

    /// <summary>Blocks until completed (see <see cref="BlockingWaiter"/>); the token is validated.</summary>
    internal void WaitForCompletion(short token)
    {
        ValidateToken(token);
        if (!IsCompletedUnchecked)
        {
            BlockingWaiter.Wait(this, token);
        }
    }

    /// <summary>
    /// For a job that has not started yet (a spawned job still in a queue): claim it and run it on
    /// the calling thread. Returns false when the cell is not of that kind or somebody else claimed it.
    /// </summary>
    internal virtual bool TryRunInline(PerThread state) => false;

    /// <summary>
    /// Join helping, for the awaiter of a job that awaits this cell: if this is a spawned job that
    /// has not started and the caller runs on that job's own runtime, run it here, now, instead of
    /// suspending the awaiting job behind it. True if it ran (it may still be pending then).
    /// </summary>
    internal virtual bool TryHelp() => false;

    /// <summary>
    /// The awaiter side of <see cref="TryHelp"/>: whether a pending job is complete after helping.
    /// Only on the pending path (the fast path has already read the cell), so it costs a suspension
    /// nothing measurable.
    /// </summary>
    // AggressiveOptimization here and below: optimized from the first call, so that one-shot
    // programs do not run the spawn path as tier-0 code (docs/design.md, "Cold runs").
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    internal static bool HelpThenCheck(JobCell cell, short token) => cell.TryHelp() && cell.IsCompleted(token);

    /// <summary>The runtime a spawned job belongs to; null for cells that are not spawned jobs.</summary>
    internal virtual Scheduling.JobRuntime? OwnerRuntime => null;

    /// <summary>
    /// True for a cell whose consumption (its <see cref="Release"/>) runs user code, as a select's
    /// does (the winning case's handler). Such a cell must not be consumed by a
    /// <see cref="CellObserver"/>, which runs inline inside a completion.
    /// </summary>
    internal virtual bool ConsumingRunsUserCode => false;

    /// <summary>For a spawned job that never started: complete it as canceled (runtime disposal).</summary>
    internal virtual bool TryCancelUnstarted() => false;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private protected void ValidateToken(short token)
    {
        if (!IsCurrent(token))
        {
            ThrowHelper.ThrowStaleToken();
        }
    }

    /// <summary>
    /// Whether an awaiter is registered on this pending cell (a racy read). A blocking wait that runs
    /// the job inline (<see cref="TryRunInline"/>) registers only afterwards, so it asks first: run
    /// inline, the job's completion would hand the result to that awaiter and the wait would then
    /// consume it from under it, leaving the first consumer with the misuse exception.
    /// </summary>
    internal bool HasAwaiter => Volatile.Read(ref _continuation) is { } continuation && !ReferenceEquals(continuation, s_completed) && !ReferenceEquals(continuation, s_spawnMark);

    /// <summary>The registered continuation, for diagnostics (may be stale by the time it is read).</summary>
    internal object? ContinuationUnchecked => Volatile.Read(ref _continuation);

    /// <summary>A short description for diagnostics: the async method or the kind of cell.</summary>
    internal virtual string Describe() => GetType().Name;

    /// <summary>For diagnostics: the cell this job is suspended on, when it can tell.</summary>
    internal virtual JobCell? AwaitedCell() => null;

    /// <summary>
    /// For diagnostics: the cells a race waits for (a <c>Job.WhenAny</c> or <c>WaitAsync</c> promise,
    /// which ends when any of them does), watched through observers rather than awaited, so that
    /// <see cref="AwaitedCell"/> cannot name them; null for every other cell and once the race is decided.
    /// </summary>
    internal virtual JobCell?[]? RacedCells() => null;

    /// <summary>For diagnostics: what this job awaits when that is not another tracked cell.</summary>
    internal virtual string? DescribeAwaiting() => null;

    /// <summary>
    /// For diagnostics: whether the job runs now, between two awaits, instead of being suspended.
    /// A job that suspended once stays listed while it runs again; blocked in a <c>Wait()</c>, it
    /// awaits nothing, and must not read as a job waiting on something outside the runtime.
    /// </summary>
    internal virtual bool IsRunningBetweenAwaits() => false;

    /// <summary>Releases the cell once its outcome was consumed (pool return, or token invalidation).</summary>
    private protected abstract void Release();

    /// <summary>Clears the error and the continuation and bumps the version (invalidating old handles).</summary>
    private protected void ResetCell()
    {
        _aux = null;
        ResetCellKeepingAux();
    }

    /// <summary>As <see cref="ResetCell"/>, for a derived type that keeps what it parked in <c>_aux</c> (no error is there).</summary>
    private protected void ResetCellKeepingAux()
    {
        Debug.Assert(_aux is not JobFailure, "an error must not survive the reset");
        InvalidateTokens();
        Volatile.Write(ref _continuation, null);
    }

    /// <summary>Invalidates outstanding handles without clearing the outcome: the next token, and the count-owed flag cleared.</summary>
    private protected void InvalidateTokens() => _version = (short)((_version | CountOwedBit) + 1);

    /// <summary>Only boxes that are also queued work override this; a plain cell is never scheduled.</summary>
    internal override void Execute(PerThread state) => Debug.Fail("a completion cell is not runnable");
}
