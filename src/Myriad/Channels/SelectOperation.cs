using System;
using System.Threading;
using Myriad.Coordination;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Channels;

/// <summary>
/// One select: its cases, and the completion cell (the index of the case that fired) its caller
/// awaits. Built by <see cref="SelectBuilder"/>, run once by <see cref="Start"/>, finished (handler
/// run, state recycled) when its result is consumed. Pooled.
/// </summary>
/// <remarks>
/// <para><b>States.</b> Building (cases being added; <c>_started</c> false) -> Started (polled, then
/// either resolved at once or waiting with its cases queued in their channels) -> Resolved (the cell
/// completed) -> Consumed (<see cref="Release"/> unlinked the cases, recycled them and ran the winning
/// handler). The version token of the cell guards every builder and handle: a stale one throws.</para>
/// <para><b>Commit protocol</b> (Go's <c>selectDone</c>). <c>_committed</c> (0 open, 1 committed) is
/// the one flag every party that may finish the select races for: a counterpart on any of the
/// channels (through a case's <see cref="IWaiter{T}.TryClaim"/>), <see cref="Chan{T}.Close"/>, the
/// timer, the cancellation token.
/// 1. Start polls the cases in a fresh random order (so that among ready cases each is chosen with
///    equal probability, as in Go): first each under its own channel's lock alone (a select that finds
///    a case ready pays one lock; see <c>PollOneLockAtATime</c>); if none could complete, it takes the
///    locks of all its channels, ordered by identity hash code with try-locks among equal codes (no
///    two selects can then deadlock; see <c>SelectOperation.Locks.cs</c>), and polls again in the same order.
/// 2. If a case can complete, it is performed under its channel's lock. Nobody else can know this
///    select yet, so it commits without an atomic. Locks are released, then the counterpart waiter
///    (if any) and the select's cell are completed.
/// 3. If none can and there is a default case, the select commits to it.
/// 4. Otherwise every case is queued in its channel, still under all the locks, so no counterpart
///    sees a partly registered select. The locks are released; only then the timer and the token
///    callback are armed (they complete the cell, which must never happen under a lock).
/// 5. From then on, whoever wins the compare-exchange of <c>_committed</c> from 0 to 1 records the
///    winning index and, after releasing its own lock, completes the cell. Losers leave the case
///    alone; channels drop such stale cases from their queues when they meet them.
/// 6. Consuming the result unlinks every case that is still queued (each under its channel's lock),
///    disarms the timer and token, recycles the cases, and runs the winner's handler last, so that a
///    handler that throws leaves nothing behind.</para>
/// <para><b>Pooling.</b> An operation that armed a timer or a token callback is never returned to the
/// pool (a late callback must find this very object, committed). A select that resolves in step 2 or
/// 3 arms nothing, so a select that finds a case ready allocates nothing in steady state, whatever
/// its timeout or token. A recycled operation keeps each slot's last case as a spare, and a thread
/// keeps its last operation at hand: a select in a loop, which has the same shape every time, reuses
/// the same objects without touching the shared pools.</para>
/// </remarks>
internal sealed partial class SelectOperation : SourceBox<int>
{
    private static readonly Action<object?> s_onCanceled = static s => ((SelectOperation)s!).OnCanceled();

    [ThreadStatic] private static SelectOperation? t_cached;

    /// <summary>The channel cases, in the order they were added, each slot with its spare case.</summary>
    private CaseSlot[] _slots = new CaseSlot[4];
    private int _caseCount;
    private int _totalCount;
    private int _defaultIndex = -1;
    private Action? _onDefault;
    private int _timeoutIndex = -1;
    private TimeSpan _timeout;
    private Action? _onTimeout;
    private CancellationToken _cancellationToken;
    private bool _hasCancellation;
    private bool _started;
    private bool _enqueued;
    private bool _armed;
    private int _committed;
    private int _winner = -1;
    private TimerEntry? _timer;
    private CancellationTokenRegistration _registration;

    internal static SelectOperation Rent()
    {
        SelectOperation? op = t_cached;
        if (op is not null)
        {
            t_cached = null;
            return op;
        }

        return BoxPool<SelectOperation>.Shared.Rent() ?? new();
    }

    // Another side's call (a send, a receive, a close) completes the select: plain code awaiting it
    // must not run inside that call (see JobCell.ResumesForeignWaitersAsynchronously).
    private protected override bool ResumesForeignWaitersAsynchronously => true;

    internal override string Describe() =>
        $"Select ({_caseCount} channel case(s){(_timeoutIndex >= 0 ? ", timeout" : "")})";

    /// <summary>Whether a builder holding <paramref name="token"/> may still add cases or start the select.</summary>
    internal bool IsBuilding(short token) => token == Version && !_started;

    /// <summary>Whether a builder holding <paramref name="token"/> and <paramref name="stamp"/> is the latest copy of a select being built.</summary>
    internal bool IsLatest(short token, int stamp) => IsBuilding(token) && stamp == _stamp;

    /// <summary>
    /// Bumped by every change a builder makes. A builder remembers the stamp its own change left, and
    /// may go on (add a case, or start the select) only while the stamp is still that one: a copy of a
    /// builder that another copy has since changed is stale, so a case added through one copy can
    /// never run when an earlier copy is awaited.
    /// </summary>
    internal int Stamp => _stamp;

    private int _stamp;

    /// <summary>The receiver of the winning receive case's item (a <see cref="SelectValueSink{T}"/>), for <see cref="SelectBuilder.AsJob{T}"/>; null otherwise.</summary>
    internal object? ValueSink;

    /// <summary>The index of the case that fired, once the cell completed successfully (its result, read without consuming it).</summary>
    internal int Winner => _winner;

    internal void AddReceive<T, TState>(Chan<T>? channel, TState state, Delegate? handler, bool reportsClose)
    {
        _stamp++;
        if (channel is null)
        {
            _totalCount++; // Go's nil channel: the case keeps its index and never fires
            return;
        }

        ref CaseSlot slot = ref NextSlot();
        SelectReceiveCase<T, TState> c = slot.TakeSpare<SelectReceiveCase<T, TState>>() ?? SelectReceiveCase<T, TState>.Rent();
        c.Init(this, _totalCount++, channel, state, handler, reportsClose);
        slot.Case = c;
    }

    internal void AddSend<T, TState>(Chan<T>? channel, T item, TState state, Delegate? handler)
    {
        _stamp++;
        if (channel is null)
        {
            _totalCount++;
            return;
        }

        ref CaseSlot slot = ref NextSlot();
        SelectSendCase<T, TState> c = slot.TakeSpare<SelectSendCase<T, TState>>() ?? SelectSendCase<T, TState>.Rent();
        c.Init(this, _totalCount++, channel, item, state, handler);
        slot.Case = c;
    }

    internal void AddDefault(Action? handler)
    {
        _stamp++;
        if (_defaultIndex >= 0)
        {
            throw new InvalidOperationException("A select can have only one default case.");
        }

        if (_timeoutIndex >= 0)
        {
            throw new InvalidOperationException("A select with a default case never waits, so it cannot also have a timeout.");
        }

        _defaultIndex = _totalCount++;
        _onDefault = handler;
    }

    internal void AddTimeout(TimeSpan timeout, Action? handler)
    {
        TimerQueue.ThrowIfInvalid(timeout, nameof(timeout));
        _stamp++;
        if (_timeoutIndex >= 0)
        {
            throw new InvalidOperationException("A select can have only one timeout.");
        }

        if (_defaultIndex >= 0)
        {
            throw new InvalidOperationException("A select with a default case never waits, so it cannot also have a timeout.");
        }

        _timeoutIndex = _totalCount++;
        _timeout = timeout;
        _onTimeout = handler;
    }

    internal void SetCancellation(CancellationToken cancellationToken)
    {
        _stamp++;
        if (_hasCancellation)
        {
            // As a second timeout does: silently keeping one token would leave the select waiting
            // after the other fired.
            throw new InvalidOperationException("A select can have only one cancellation token; to cancel it with either of two, pass a linked token (CancellationTokenSource.CreateLinkedTokenSource).");
        }

        _hasCancellation = true;
        _cancellationToken = cancellationToken;
    }

    /// <summary>
    /// Whether the select has receive cases and none of them receives <paramref name="type"/>: its
    /// <c>AsJob&lt;T&gt;</c> with that type could deliver no item, and every item a case takes would
    /// be lost (a mistake such as <c>AsJob&lt;ReceiveResult&lt;long&gt;&gt;</c> for a channel of long).
    /// </summary>
    internal bool ReceivesOnlyOtherTypesThan(Type type)
    {
        bool anyReceive = false;
        for (int i = 0; i < _caseCount; i++)
        {
            if (_slots[i].Case?.ReceivedType is { } received)
            {
                if (received == type)
                {
                    return false;
                }

                anyReceive = true;
            }
        }

        return anyReceive;
    }

    private ref CaseSlot NextSlot()
    {
        if (_caseCount == _slots.Length)
        {
            Array.Resize(ref _slots, _slots.Length * 2);
        }

        return ref _slots[_caseCount++];
    }

    /// <summary>Step 5: the race every finisher runs; the winner records its case.</summary>
    internal bool TryCommit(int index)
    {
        if (Interlocked.CompareExchange(ref _committed, 1, 0) != 0)
        {
            return false;
        }

        _winner = index;
        return true;
    }

    /// <summary>
    /// Step 5 for a counterpart on a channel (a hand-off): as <see cref="TryCommit"/>, except that a
    /// select whose job's runtime can no longer run it (<see cref="JobCell.ConsumerCannotRun"/>) is
    /// committed to no case and completed canceled, and the counterpart skips it like a stale case.
    /// </summary>
    internal bool TryCommitForHandOff(int index)
    {
        if (!TryCommit(index))
        {
            return false;
        }

        if (ConsumerCannotRun())
        {
            _winner = -1;
            CancelConsumerLater();
            return false;
        }

        return true;
    }

    /// <summary>
    /// The select's job was abandoned after a counterpart resolved it: a received item goes back to
    /// its channel. The handler does not run and the operation is not recycled (nobody consumes it).
    /// </summary>
    internal override void GiveBackUnconsumed()
    {
        if (ErrorUnchecked is not null)
        {
            return;
        }

        int winner = _winner;
        for (int i = 0; i < _caseCount; i++)
        {
            if (_slots[i].Case is { } c && c.Index == winner)
            {
                c.GiveBackItem();
                return;
            }
        }
    }

    /// <summary>Completes the cell for a channel case that won (never under a lock).</summary>
    internal void Resolve(SelectCase winner)
    {
        Exception? failure = winner.Failure;
        if (failure is null)
        {
            if (ValueSink is not null)
            {
                winner.OfferToValueSink(); // before the completion, which publishes it
            }

            TrySetResult(winner.Index);
        }
        else
        {
            TrySetException(failure);
        }
    }

    /// <summary>The timer fired (scheduled on the runtime the select started on).</summary>
    internal override void Execute(PerThread state)
    {
        if (TryCommit(_timeoutIndex))
        {
            TrySetResult(_timeoutIndex);
        }
    }

    private void OnCanceled()
    {
        if (TryCommit(-1))
        {
            TrySetException(ThrowHelper.Canceled(_cancellationToken));
        }
    }

    /// <summary>
    /// A channel case and the spare kept from an earlier use of the slot. A struct, so that storing a
    /// case costs no covariant array-store check.
    /// </summary>
    private struct CaseSlot
    {
        internal SelectCase? Case;
        internal SelectCase? Spare;

        internal T? TakeSpare<T>()
            where T : SelectCase
        {
            if (Spare is T spare)
            {
                Spare = null;
                return spare;
            }

            return null;
        }
    }
}
