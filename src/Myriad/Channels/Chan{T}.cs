using Myriad.Internal;
using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Channels;
using Myriad.Coordination;
using Myriad.Jobs;

namespace Myriad.Channels;

/// <summary>
/// A channel between jobs with Go's semantics: unbuffered (rendezvous), bounded, or unbounded; many
/// senders and many receivers; FIFO waiters; close; and <see cref="Select"/> over several channels.
/// Create one with <see cref="Chan.Unbuffered{T}"/>, <see cref="Chan.Bounded{T}(int)"/> or
/// <see cref="Chan.Unbounded{T}"/>.
/// </summary>
/// <typeparam name="T">The element type.</typeparam>
/// <remarks>
/// <para><b>Costs.</b> An operation that can complete at once (an item is buffered, a counterpart is
/// waiting, buffer space is free) completes synchronously and allocates nothing. A receive that must
/// wait while no other receiver waits uses the channel itself as its completion cell (0 bytes, even
/// the first time). Any other operation that must wait uses a pooled waiter (0 bytes in steady
/// state) when its cancellation token cannot fire, and a fresh waiter object (plus the token's
/// registration) when it can.</para>
/// <para><b>Continuations.</b> Handing an item to a waiting job resumes that job through the
/// trampoline: inline on the sending thread while the stack is shallow, queued when it is deep, so a
/// chain of a million channel hops cannot overflow the stack.</para>
/// <para><b>Close.</b> <see cref="Close"/> stops sends (a send on a closed channel, or one waiting
/// when it closes, throws <see cref="ChannelClosedException"/>); receivers drain what was buffered,
/// then see the channel as closed: <see cref="ReceiveOkAsync"/> returns <c>Ok = false</c>,
/// <see cref="ReceiveAsync"/> throws <see cref="ChannelClosedException"/> (or the close error).</para>
/// </remarks>
public sealed partial class Chan<T> : JobBox<T>, IWaiter<T>, IWaiterHost<T>
{
    // State (all guarded by _lock):
    //   _buffer     buffered items, oldest first; never more than its capacity (null when unbuffered;
    //               the capacity lives in the ring, so an unbuffered channel stores none).
    //   _receivers  waiting receives (and select receive cases), oldest first.
    //   _senders    waiting sends (and select send cases), oldest first, each holding its item.
    //   _closed     null while open; set once by Close to the close error, or to Chan.ClosedCleanly.
    //   _inline     the state of the inline receiver: the channel itself doubles as the completion
    //               cell of one waiting ReceiveAsync (see Chan{T}.InlineReceiver.cs).
    // Invariants (counting only claimable waiters; stale select cases and canceled waiters may linger
    // until the next dequeue drops them):
    //   1. Receivers wait only while the buffer is empty: a receive takes a buffered item first.
    //   2. Senders wait only while the buffer is full (for an unbuffered channel: always until a
    //      receiver comes): a send fills free buffer space first.
    //   3. Once closed, nobody waits: Close drains both queues, and no operation queues afterwards.
    //      The one exception is an item given back after its receiver's job was abandoned
    //      (GivenBackItem, Chan{T}.GiveBack.cs): it stays in _senders, awaited by nobody, until a
    //      receive takes it, since its send succeeded.
    //   4. FIFO: buffered items leave in the order they came; waiters are served in arrival order, and
    //      a receive that frees a slot moves the oldest waiting sender's item to the buffer's tail.
    //   5. A Waiting inline receiver is older than every receiver in _receivers: it is only taken
    //      while _receivers is empty, and senders serve it first.

    /// <summary>The capacity that marks an unbounded channel.</summary>
    internal const int UnboundedCapacity = int.MaxValue;

    private TinyLock _lock;
    private object? _closed;
    private readonly ItemRing<T>? _buffer;
    private WaiterQueue<T> _receivers;
    private WaiterQueue<T> _senders;
    private int _inline;

    internal Chan(int capacity)
    {
        _buffer = capacity > 0 ? new ItemRing<T>(capacity) : null;
    }

    /// <summary>The buffer size: 0 for an unbuffered channel, <see cref="int.MaxValue"/> for an unbounded one.</summary>
    public int Capacity => _buffer?.Capacity ?? 0;

    /// <summary>Items currently buffered (always 0 for an unbuffered channel: an item waiting in a send is not buffered).</summary>
    public int Count
    {
        get
        {
            _lock.Enter();
            int count = _buffer?.Count ?? 0;
            _lock.Exit();
            return count;
        }
    }

    /// <summary>Whether <see cref="Close"/> was called (items may still be buffered).</summary>
    public bool IsClosed => Volatile.Read(ref _closed) is not null;

    /// <summary>Whether the channel is closed and drained: every receive from now on reports closure.</summary>
    public new bool IsCompleted
    {
        get
        {
            _lock.Enter();
            bool completed = _closed is not null && (_buffer?.Count ?? 0) == 0 && _senders.IsEmpty; // a given-back item may remain
            _lock.Exit();
            return completed;
        }
    }

    /// <summary>The outcome of one attempt, made under the lock, to complete an operation without waiting.</summary>
    internal enum Status : byte
    {
        /// <summary>The operation would have to wait.</summary>
        WouldBlock,

        /// <summary>The operation completed (the caller may still owe a counterpart waiter its completion).</summary>
        Done,

        /// <summary>The channel is closed (and, for a receive, drained).</summary>
        Closed,
    }

    /// <summary>
    /// Under the lock: takes an item without waiting. On <see cref="Status.Done"/>,
    /// <paramref name="sender"/> is a claimed sender whose item was taken (or moved into the buffer),
    /// which the caller must complete after releasing the lock.
    /// </summary>
    internal Status TryReceiveLocked(out T item, out IWaiter<T>? sender)
    {
        Debug.Assert(_lock.IsHeld, "caller holds the lock");
        if (_buffer is { Count: > 0 } buffer)
        {
            item = buffer.Dequeue();
            sender = _senders.DequeueClaimable();
            if (sender is not null)
            {
                buffer.Enqueue(sender.Item); // invariant 4: the freed slot goes to the oldest sender
            }

            return Status.Done;
        }

        sender = _senders.DequeueClaimable();
        if (sender is not null)
        {
            item = sender.Item; // unbuffered hand-off (invariant 2: a buffered channel has no waiting sender here)
            return Status.Done;
        }

        item = default!;
        return _closed is null ? Status.WouldBlock : Status.Closed;
    }

    /// <summary>
    /// Under the lock: offers <paramref name="item"/> without waiting. On <see cref="Status.Done"/>,
    /// <paramref name="receiver"/> is either null (the item was buffered) or a claimed receiver the
    /// caller must complete with the item after releasing the lock.
    /// </summary>
    internal Status TrySendLocked(T item, out IWaiter<T>? receiver)
    {
        Debug.Assert(_lock.IsHeld, "caller holds the lock");
        receiver = null;
        if (_closed is not null)
        {
            return Status.Closed;
        }

        if (TryClaimInlineReceiverLocked())
        {
            receiver = this; // invariant 5: the inline receiver is the oldest
            return Status.Done;
        }

        receiver = _receivers.DequeueClaimable();
        if (receiver is not null)
        {
            return Status.Done; // invariant 1: the buffer is empty, so handing over directly keeps FIFO
        }

        if (_buffer is { } buffer && buffer.HasRoom)
        {
            buffer.Enqueue(item);
            return Status.Done;
        }

        return Status.WouldBlock;
    }

    /// <summary>Under the lock: queues a waiter after an attempt returned <see cref="Status.WouldBlock"/>.</summary>
    internal void EnqueueLocked(IWaiter<T> waiter)
    {
        Debug.Assert(_lock.IsHeld && _closed is null, "queued under the lock, never on a closed channel");
        if (waiter.IsSender)
        {
            _senders.Enqueue(waiter);
        }
        else
        {
            _receivers.Enqueue(waiter);
        }
    }

    /// <summary>Unlinks a waiter if it is still queued (cancellation, select clean-up).</summary>
    void IWaiterHost<T>.RemoveWaiter(IWaiter<T> waiter) => RemoveWaiter(waiter);

    /// <summary>
    /// No spare waiter slot (<see cref="SpareWaiter.None"/>): the channel is sized for a million
    /// instances, and its waiters recycle through the thread-local pools instead.
    /// </summary>
    ref SpareWaiter IWaiterHost<T>.Spare => ref SpareWaiter.None;

    /// <inheritdoc cref="IWaiterHost{T}.RemoveWaiter"/>
    internal void RemoveWaiter(IWaiter<T> waiter)
    {
        _lock.Enter();
        if (waiter.IsSender)
        {
            _senders.Remove(waiter);
        }
        else
        {
            _receivers.Remove(waiter);
        }

        _lock.Exit();
    }

    /// <summary>
    /// Withdraws a waiting <see cref="ReceiveOkAsync"/> whose caller gave up on it (a
    /// <c>ReadAllAsync</c> enumerator disposed while its <c>MoveNextAsync</c> waits): if the receive
    /// still waits in the queue, it is unlinked and claimed under the lock, so no sender can hand it an
    /// item any more, and completed with <paramref name="reason"/> after the lock. False when it no
    /// longer waits: the channel claimed it (an item or the close is on its way to it), its token did
    /// (it ends canceled), or <paramref name="receive"/> is no waiting receive at all.
    /// <paramref name="receiveEnded"/> is the caller's record that the receive ended: set by the
    /// caller's completion path before it consumes the receive (which may send the waiter back to its
    /// pool), read here under the lock.
    /// </summary>
    /// <remarks>
    /// <para><b>Telling the receive apart.</b> The caller may read <paramref name="receive"/> while the
    /// receive completes on another thread: the waiter W it names may then be claimed by a sender or
    /// <see cref="Close"/> (unlinked, or linked in Close's private queue, and about to be completed),
    /// back in its pool, or queued again by another receive of this channel or of another. Neither the
    /// host nor the version tells these apart: they are written outside this lock, and the
    /// version comes back to the same value after 32,768 uses. So, under this channel's lock:
    /// 1. W's membership mark (<see cref="IWaiter{T}.InHostQueue"/>) is read first, with acquire
    ///    semantics. If W is linked in this channel's queue, it was set under this lock and only a
    ///    holder of this lock can clear it: W stays queued here, and cannot be completed or reused,
    ///    until the lock is released. If W is unlinked or in Close's private queue, the mark was cleared
    ///    under this lock (a private queue never sets it) and reads false, unless W was reused and
    ///    queued again since (step 2).
    /// 2. Then <paramref name="receiveEnded"/>. If the mark read true but W is not the caller's receive
    ///    any more, W was released and queued again (here, or by another host): the caller's completion
    ///    path set the flag before consuming W, consuming happens before the release, the release
    ///    before the reuse, and the reuse's queueing writes the mark with a release; reading that mark
    ///    with acquire, this thread sees the flag set. Both reads together are therefore exact: the mark
    ///    set and the flag clear mean W waits in this channel's queue for the caller's receive, and
    ///    nothing else touches W's links until the lock is released.
    /// 3. The host and the version are checked too (cheap; they tell a waiter of another channel, or
    ///    a caller's stale record, apart before any link is read).
    /// 4. The claim is the one a sender makes (<see cref="WaiterQueue{T}.DequeueClaimable"/>: unlinked
    ///    first, then claimed), so the withdraw and a sender, or the token's callback, never both finish
    ///    the waiter.</para>
    /// </remarks>
    internal bool TryWithdrawReceiver(Job<ReceiveResult<T>> receive, ref bool receiveEnded, Exception reason)
    {
        if (receive._box is not ReceiveOkWaiter<T> waiter)
        {
            return false;
        }

        _lock.Enter();
        bool withdrawn = waiter.InHostQueueAcquire // first: see "Telling the receive apart"
            && !Volatile.Read(ref receiveEnded)
            && waiter.WaitsIn(this)
            && waiter.Version == receive._token
            && _receivers.Remove(waiter)
            && waiter.TryClaim();
        _lock.Exit();
        if (withdrawn)
        {
            waiter.TrySetException(reason); // after the lock: completing runs the waiter's continuation
        }

        return withdrawn;
    }

    /// <summary>Takes the channel's lock (select holds several, in the order of <c>SelectOperation.Locks.cs</c>).</summary>
    internal void EnterLock() => _lock.Enter();

    /// <summary>Takes the channel's lock if it is free; never waits.</summary>
    internal bool TryEnterLock() => _lock.TryEnter();

    /// <summary>Releases the channel's lock.</summary>
    internal void ExitLock() => _lock.Exit();

    /// <summary>The error the channel was closed with; null while open or after a clean close (written once, under the lock).</summary>
    internal Exception? CloseError => Volatile.Read(ref _closed) as Exception;
}
