using System;
using System.Diagnostics;

namespace Myriad.Coordination;

/// <summary>
/// A suspended operation waiting in the FIFO queue of a channel or a coordination primitive (its
/// "host"): a waiting send or receive, a case of a waiting select, a waiting lock or wait-group wait.
/// The counterpart of Go's <c>sudog</c>.
/// </summary>
/// <remarks>
/// <para><b>Claiming.</b> A waiter can be finished by exactly one party: its host (an item arrived, a
/// permit was released, the channel closed), its cancellation token, or, for a select case, any other
/// case of the same select (the select's commit flag is shared by all its cases). Whoever wants to
/// finish it first calls <see cref="TryClaim"/>; only the winner may call <see cref="Complete"/> or
/// <see cref="CompleteClosed"/>, and only after releasing every lock it holds, because completing runs
/// the waiter's continuation, possibly inline.</para>
/// <para><b>Waiters that can no longer run.</b> A waiter whose job belongs to a runtime that will never
/// run it again (disposed) must not take an item or a lock: the job would only be woken to end
/// canceled, and what it was handed would be lost with it. <see cref="TryClaim"/> takes care of that
/// in one place for every host: it claims such a waiter, completes it canceled (on the thread pool,
/// since the caller holds the host's lock) and returns false, so the host moves on to the next waiter
/// or keeps the item, exactly as for a canceled waiter (see <c>JobCell.ConsumerCannotRun</c>).</para>
/// <para><b>Links</b> belong to the host and are read and written only under the host's lock.
/// <see cref="Next"/> is null exactly when the waiter is in no queue.</para>
/// <para><b>Membership.</b> <see cref="InHostQueue"/> is true exactly while the waiter is linked in a
/// queue of its host (not in a private queue of claimed waiters, which <see cref="WaiterQueue{T}.EnqueueClaimed"/>
/// links, nor in no queue). It is set and cleared under the host's lock only (a private queue's
/// unlinking, outside any lock, writes false over false), so a thread that holds host A's lock reads
/// it exactly for A as long as it knows the waiter is not linked in another host's queue: "linked"
/// alone (<see cref="Next"/> not null) cannot tell A's queue from a private queue of A's claimed
/// waiters, or, for a pooled waiter reused meanwhile, from another host's queue.</para>
/// </remarks>
internal interface IWaiter<T>
{
    /// <summary>The next waiter in the circular queue; null when not queued. Host lock only.</summary>
    IWaiter<T>? Next { get; set; }

    /// <summary>The previous waiter in the circular queue. Host lock only.</summary>
    IWaiter<T>? Prev { get; set; }

    /// <summary>Whether the waiter is linked in its host's queue (see "Membership"). Host lock only; the write is a release.</summary>
    bool InHostQueue { get; set; }

    /// <summary>True for a waiting send (it offers <see cref="Item"/>), false for a waiting receive.</summary>
    bool IsSender { get; }

    /// <summary>What a waiting sender offers; read by the claimer after a successful claim.</summary>
    T Item { get; }

    /// <summary>Takes the exclusive right to complete this waiter; false if somebody else has it, or if its job can no longer run (it is then canceled).</summary>
    bool TryClaim();

    /// <summary>Finishes a claimed waiter successfully: a receiver gets <paramref name="item"/>, a sender learns its item was taken. Never under a lock.</summary>
    void Complete(T item);

    /// <summary>Finishes a claimed waiter because its host closed (<paramref name="error"/>: the close error, if any). Never under a lock.</summary>
    void CompleteClosed(Exception? error);
}

/// <summary>What a host of waiters offers its waiters: removal on cancellation, and a slot for a spare waiter.</summary>
internal interface IWaiterHost<T>
{
    /// <summary>Unlinks <paramref name="waiter"/> if it is still queued; takes the host's lock.</summary>
    void RemoveWaiter(IWaiter<T> waiter);

    /// <summary>The host's slot for a recycled waiter (a reference to a field: no generic virtual call on the hot path).</summary>
    ref SpareWaiter Spare { get; }
}

/// <summary>
/// An intrusive FIFO of <see cref="IWaiter{T}"/>: a circular doubly-linked list reached through its
/// head (the tail is <c>head.Prev</c>), so an empty queue costs one null field and removing a canceled
/// waiter from the middle is O(1). Not thread-safe: every call is made under the host's lock.
/// </summary>
/// <remarks>
/// Invariants: <c>_head</c> is null or a waiter whose links form a cycle through every queued waiter;
/// a waiter is in at most one queue; an unlinked waiter has null links. <see cref="Remove"/> must only
/// be given a waiter of this queue (or an unlinked one): hosts with several queues pick the queue from
/// <see cref="IWaiter{T}.IsSender"/>.
/// </remarks>
internal struct WaiterQueue<T>
{
    private IWaiter<T>? _head;

    internal readonly bool IsEmpty => _head is null;

    /// <summary>The oldest waiter, without removing it.</summary>
    internal readonly IWaiter<T>? Head => _head;

    internal void Enqueue(IWaiter<T> waiter)
    {
        Link(waiter);
        waiter.InHostQueue = true;
    }

    /// <summary>
    /// Queues a waiter the caller claimed (and unlinked from its host's queue) into a private queue, to
    /// complete it after the host's lock: it is linked, but not in its host's queue (see "Membership").
    /// </summary>
    internal void EnqueueClaimed(IWaiter<T> waiter)
    {
        Debug.Assert(!waiter.InHostQueue, "claimed waiters were unlinked from the host's queue first");
        Link(waiter);
    }

    private void Link(IWaiter<T> waiter)
    {
        Debug.Assert(waiter.Next is null, "a waiter is in at most one queue");
        IWaiter<T>? head = _head;
        if (head is null)
        {
            waiter.Next = waiter;
            waiter.Prev = waiter;
            _head = waiter;
            return;
        }

        IWaiter<T> tail = head.Prev!;
        waiter.Prev = tail;
        waiter.Next = head;
        tail.Next = waiter;
        head.Prev = waiter;
    }

    /// <summary>Queues <paramref name="waiter"/> ahead of every other (an item given back was the oldest).</summary>
    internal void EnqueueFront(IWaiter<T> waiter)
    {
        Enqueue(waiter);
        _head = waiter; // the circle is unchanged: the new tail becomes the head
    }

    /// <summary>Unlinks <paramref name="waiter"/>; false if it was not queued.</summary>
    internal bool Remove(IWaiter<T> waiter)
    {
        IWaiter<T>? next = waiter.Next;
        if (next is null)
        {
            return false;
        }

        if (ReferenceEquals(next, waiter))
        {
            Debug.Assert(ReferenceEquals(_head, waiter), "a lone waiter must be this queue's head");
            _head = null;
        }
        else
        {
            IWaiter<T> prev = waiter.Prev!;
            prev.Next = next;
            next.Prev = prev;
            if (ReferenceEquals(_head, waiter))
            {
                _head = next;
            }
        }

        waiter.Next = null;
        waiter.Prev = null;
        waiter.InHostQueue = false;
        return true;
    }

    /// <summary>
    /// Removes waiters from the front until one can be claimed, and returns it (or null when none
    /// is left). Waiters that fail the claim were finished elsewhere (canceled, or a select that
    /// committed on another case) or belong to a job that can no longer run (the claim canceled it):
    /// they are dropped, as Go drops stale select sudogs.
    /// </summary>
    internal IWaiter<T>? DequeueClaimable()
    {
        while (_head is { } waiter)
        {
            Remove(waiter);
            if (waiter.TryClaim())
            {
                return waiter;
            }
        }

        return null;
    }

    /// <summary>
    /// Moves every claimable waiter into <paramref name="claimed"/> (stale ones are dropped). Used to
    /// release all waiters at once; the caller completes them after leaving the lock, unlinking each
    /// before completing it (a completed waiter may be recycled at once).
    /// </summary>
    internal void DrainClaimable(ref WaiterQueue<T> claimed)
    {
        while (DequeueClaimable() is { } waiter)
        {
            claimed.EnqueueClaimed(waiter);
        }
    }

    /// <summary>For a private queue of claimed waiters, outside any lock: completes each with <paramref name="item"/>, oldest first.</summary>
    internal void CompleteAll(T item)
    {
        while (Dequeue() is { } waiter)
        {
            waiter.Complete(item); // unlinked first: a completed waiter may be recycled at once
        }
    }

    /// <summary>Like <see cref="CompleteAll"/>, completing each as closed.</summary>
    internal void CompleteAllClosed(Exception? error)
    {
        while (Dequeue() is { } waiter)
        {
            waiter.CompleteClosed(error);
        }
    }

    /// <summary>Removes and returns the head (no claim: for a private queue of already claimed waiters).</summary>
    internal IWaiter<T>? Dequeue()
    {
        IWaiter<T>? head = _head;
        if (head is not null)
        {
            Remove(head);
        }

        return head;
    }
}
