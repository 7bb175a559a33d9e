using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Jobs;
using Myriad.Scheduling;

namespace Myriad.Channels;

/// <summary>
/// The items of a channel until it is closed and drained, for <c>await foreach</c> (Go's
/// <c>for v := range ch</c>); returned by <see cref="Chan{T}.ReadAllAsync"/>. It is its own enumerator
/// and an <see cref="IAsyncEnumerable{T}"/>.
/// </summary>
/// <typeparam name="T">The element type.</typeparam>
/// <remarks>
/// <para><b>Costs.</b> <c>await foreach</c> binds to <see cref="MoveNextAsync"/>, which returns a
/// <see cref="Job{T}"/>: while items are buffered (or senders wait) it completes synchronously and
/// allocates nothing; when it must wait, this object is the completion cell the enumerating job
/// awaits, so a job resumes as after any other Myriad await (no thread-pool hop). Through the
/// <see cref="IAsyncEnumerator{T}"/> interface (LINQ, <c>WithCancellation</c>, code that is not a job)
/// the same job is converted with <see cref="Job{T}.AsValueTask"/>.</para>
/// <para><b>States</b> (the cell's own: pending while a receive waits, completed until the awaiter
/// consumes the outcome, which resets it for the next wait).
/// 1. <see cref="MoveNextAsync"/> takes a buffered item under the channel's lock, or else starts a
///    <see cref="Chan{T}.ReceiveOkAsync"/> and registers this object (a work item) as its continuation;
///    it hands out a job over this cell with the cell's current version.
/// 2. When that receive completes, <see cref="Execute"/> consumes its outcome and completes this cell
///    (true with <see cref="Current"/> set, false at a clean close, or the close error or the
///    cancellation), which resumes the enumerating job through the trampoline.
/// 3. The job consumes the outcome; that releases the cell (version incremented), ready for step 1.
/// The enumerator contract (one <see cref="MoveNextAsync"/> at a time, each awaited before the next)
/// is what keeps steps 1-3 from overlapping, and it is checked: step 1 marks the cell waiting, step 3
/// clears the mark, and a <see cref="MoveNextAsync"/> that finds it set throws
/// <see cref="InvalidOperationException"/> before it touches the channel. Two overlapping waits would
/// share the one receive slot and the one cell: each would take an item, and the first awaiter would
/// consume the second's outcome.</para>
/// <para><b>Disposal while a <see cref="MoveNextAsync"/> waits</b> (someone gave up on it, after a
/// timeout say). Left queued, the receive would take the next item sent and complete a read nobody
/// awaits any more: the item would be lost. So <see cref="DisposeAsync"/> withdraws it:
/// 1. It reads the waiting mark of step 1, and the receive step 1 recorded (written by the
///    enumerating flow only, which the enumerator contract keeps from running beside
///    <see cref="DisposeAsync"/>, so the record is whole).
/// 2. Under the channel's lock, if that receive still waits in the queue, it unlinks and claims it as
///    a sender would, so that no sender can hand it an item any more; it then completes it with
///    <see cref="OperationCanceledException"/>, and step 2 of the states above fails this cell with it
///    (<see cref="Chan{T}.TryWithdrawReceiver"/>). It tells exactly whether the receive still waits
///    there: step 2 sets a flag before it consumes the receive (which may send its waiter back to a
///    pool, to be reused by another receive, even with the same version after 32,768 uses), and the
///    withdraw reads the waiter's queue membership, then that flag, under the lock. A receive a
///    sender or the close already claimed is no longer a member, and a waiter queued again by another
///    receive comes with the flag set.
/// 3. If the receive no longer waits, the channel or the token got to it first: it completes with an
///    item (which stays the result of the waiting <see cref="MoveNextAsync"/>), the close, or the
///    cancellation. Either way no item is left with a read nobody can take it from, and an item
///    that got there first is lost only if its caller never looks at that result.
/// 4. Only then is the linked token source disposed: disposed first, it would unregister the tokens
///    from a receive still queued, which then ignored both and took the next item.</para>
/// <para><b>After a runtime's disposal.</b> The job that enumerates awaits this cell, not the receive,
/// so the hand-off's claim-time check (<c>JobCell.ConsumerCannotRun</c>, which looks at the receive's
/// continuation: this cell) would see no job and give the item to an enumeration that can never go
/// on. Step 1 therefore records the runtime of the thread that calls <see cref="MoveNextAsync"/> (the
/// enumerating job's) as this cell's owner, which that check reads. And when the check cannot tell
/// (the wait was started off the runtime, or the disposal raced the hand-off), the abandoned job finds
/// this cell completed with an item and gives it back to the channel
/// (<see cref="GiveBackUnconsumed"/>).</para>
/// </remarks>
public sealed class ChanRange<T> : JobBox<bool>, IAsyncEnumerable<T>, IAsyncEnumerator<T>
{
    private readonly Chan<T> _channel;
    private readonly CancellationToken _token;
    private readonly CancellationTokenSource? _linked;

    /// <summary>
    /// The receive the last wait started (step 1). Written only by the enumerating flow, and kept
    /// after it completes (not cleared by step 2, which runs on the sender's thread), so that
    /// <see cref="DisposeAsync"/> reads it whole. A stale one (its waiter maybe reused since, even with
    /// the same version after 32,768 uses) is never withdrawn: under the channel's lock, the withdraw
    /// reads the waiter's queue membership, then <see cref="_receiveEnded"/>, which together tell
    /// exactly whether this receive still waits in that channel (see <c>Chan{T}.TryWithdrawReceiver</c>).
    /// </summary>
    private Job<ReceiveResult<T>> _receive;

    /// <summary>
    /// Set by step 2 before it consumes <see cref="_receive"/> (which may send its waiter back to a
    /// pool), cleared by step 1 before it starts the next receive.
    /// </summary>
    private bool _receiveEnded;

    /// <summary>Set by <see cref="DisposeAsync"/>; once set, never unset.</summary>
    private bool _disposed;
    private T _current = default!;
    private int _enumerated;

    /// <summary>Set by step 1 when it hands out a job over this cell, cleared by step 3 when that job's outcome is consumed.</summary>
    private bool _waiting;

    internal ChanRange(Chan<T> channel, CancellationToken cancellationToken, CancellationTokenSource? linked = null)
    {
        _channel = channel;
        _token = cancellationToken;
        _linked = linked;
    }

    /// <summary>The item the last successful <see cref="MoveNextAsync"/> received.</summary>
    public T Current => _current;

    /// <summary>
    /// The enumerator: this object for the first call, a fresh enumeration of the same channel for
    /// each later one (as a compiler-generated async iterator does).
    /// </summary>
    /// <param name="cancellationToken">Stops the enumeration while it waits, together with the token
    /// given to <see cref="Chan{T}.ReadAllAsync"/>.</param>
    public ChanRange<T> GetAsyncEnumerator(CancellationToken cancellationToken = default)
    {
        CancellationToken token = EnumerationTokens.Combine(_token, cancellationToken, out CancellationTokenSource? linked);

        if (linked is null && token == _token && Interlocked.Exchange(ref _enumerated, 1) == 0)
        {
            return this;
        }

        return new ChanRange<T>(_channel, token, linked) { _enumerated = 1 };
    }

    IAsyncEnumerator<T> IAsyncEnumerable<T>.GetAsyncEnumerator(CancellationToken cancellationToken) => GetAsyncEnumerator(cancellationToken);

    /// <summary>
    /// The enumeration through <see cref="IAsyncEnumerable{T}"/>, configured as
    /// <see cref="TaskAsyncEnumerableExtensions.ConfigureAwait{T}(IAsyncEnumerable{T}, bool)"/> does:
    /// for <c>await foreach (var x in ch.ReadAllAsync().ConfigureAwait(false))</c> in code that is not
    /// a job. (Without this method that call would not compile: this type is also
    /// <see cref="IAsyncDisposable"/>, which has a <c>ConfigureAwait</c> extension of its own.)
    /// </summary>
    /// <param name="continueOnCapturedContext">Whether to resume on the captured context, as for a <see cref="Task"/>.</param>
    public System.Runtime.CompilerServices.ConfiguredCancelableAsyncEnumerable<T> ConfigureAwait(bool continueOnCapturedContext) =>
        TaskAsyncEnumerableExtensions.ConfigureAwait((IAsyncEnumerable<T>)this, continueOnCapturedContext);

    /// <summary>
    /// Receives the next item (step 1 of the protocol): true with <see cref="Current"/> set, false once
    /// the channel is closed and drained, or once <see cref="DisposeAsync"/> ended the enumeration
    /// (nothing is taken then). Throws the close error after the last item, or
    /// <see cref="OperationCanceledException"/> if the token fires first, or if
    /// <see cref="DisposeAsync"/> withdrew the wait before an item reached it.
    /// </summary>
    /// <exception cref="InvalidOperationException">The previous call is still pending (each
    /// <see cref="MoveNextAsync"/> must be awaited before the next); thrown at the call, and nothing is
    /// taken from the channel. A call whose predecessor completed at once (an item was buffered) is
    /// fine even if that one was not awaited yet.</exception>
    public Job<bool> MoveNextAsync()
    {
        if (_waiting)
        {
            throw ChanErrors.MoveNextWhilePending();
        }

        if (_disposed)
        {
            // As a compiler-generated async iterator: a disposed enumeration has ended, and it must
            // not take an item from the channel that nobody would see.
            return new Job<bool>(false);
        }

        if (_token.IsCancellationRequested)
        {
            return Job.FromCanceled<bool>(_token);
        }

        if (_channel.TryReceive(out T? item))
        {
            _current = item;
            return new Job<bool>(true);
        }

        return WaitForItem();
    }

    ValueTask<bool> IAsyncEnumerator<T>.MoveNextAsync() => MoveNextAsync().AsValueTask();

    /// <summary>
    /// Ends the enumeration. A <see cref="MoveNextAsync"/> still waiting is withdrawn: if no item has
    /// reached it yet, it ends with <see cref="OperationCanceledException"/> and takes nothing (the
    /// next item sent stays in the channel); if one has, that item stays its result (true, with
    /// <see cref="Current"/> set). Then the tokens' link, if any, is disposed. See "Disposal while a
    /// MoveNextAsync waits".
    /// </summary>
    public ValueTask DisposeAsync()
    {
        _disposed = true;
        if (Volatile.Read(ref _waiting))
        {
            _channel.TryWithdrawReceiver(_receive, ref _receiveEnded, ChanErrors.ReadWithdrawnByDispose()); // steps 1-3
        }

        _linked?.Dispose(); // step 4
        return default;
    }

    /// <summary>The waiting half of <see cref="MoveNextAsync"/>, out of line.</summary>
    private Job<bool> WaitForItem()
    {
        _receiveEnded = false; // before the receive starts: step 2 sets it, at the earliest once the continuation is registered
        Job<ReceiveResult<T>> receive = _channel.ReceiveOkAsync(_token);
        if (receive._box is null)
        {
            // Completed at once: an item arrived since TryReceive, or the channel closed cleanly.
            _current = receive._result.Value;
            return new Job<bool>(receive._result.Ok);
        }

        short token = Version;
        _ownerRuntime = SchedulerContext.RuntimeIdOf(PerThread.Current); // see "After a runtime's disposal"
        _receive = receive;
        receive._box.OnCompleted(this, receive._token); // step 2 runs here if it already completed
        _waiting = true; // nobody can consume the outcome (step 3 clears this) before the job is returned
        return new Job<bool>(this, token);
    }

    /// <summary>Step 2: the receive completed.</summary>
    internal override void Execute(PerThread state)
    {
        Job<ReceiveResult<T>> receive = _receive; // kept: DisposeAsync may read it now (see its field)
        Volatile.Write(ref _receiveEnded, true); // before the consume below frees the waiter for reuse
        ReceiveResult<T> result;
        try
        {
            result = receive.GetAwaiter().GetResult();
        }
        catch (Exception error)
        {
            TrySetException(error);
            return;
        }

        if (result.Ok)
        {
            _current = result.Value;
        }

        TrySetResult(result.Ok);
    }

    /// <summary>
    /// The job awaiting this cell was abandoned by its runtime's disposal after the receive handed it an
    /// item: the item goes back to the channel (the next receiver gets it), as a receive waiter's does.
    /// </summary>
    internal override void GiveBackUnconsumed()
    {
        if (ErrorUnchecked is null && GetResult(Version))
        {
            T item = _current;
            _current = default!;
            _channel.GiveBack(item);
        }
    }

    /// <summary>Step 3: the outcome was consumed.</summary>
    private protected override void Release()
    {
        _waiting = false;
        ResetBox();
    }

    // No identity hash code of the channel here: a fresh channel gets a fresh one, so a deadlock
    // report of a DeterministicRuntime would read differently on every replay of the same seed.
    // A sender's or closer's call completes the pending MoveNextAsync: plain code awaiting it must
    // not run inside that call (see JobCell.ResumesForeignWaitersAsynchronously).
    private protected override bool ResumesForeignWaitersAsynchronously => true;

    internal override string Describe() =>
        $"await foreach over Chan<{Diagnostics.CompilerNames.DescribeType(typeof(T))}>.ReadAllAsync: waits for an item or the close";
}
