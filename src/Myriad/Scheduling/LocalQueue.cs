using System;
using System.Diagnostics;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

/// <summary>
/// A worker's bounded run queue: a single-producer ring that its owner pushes to and pops from, and
/// that other workers steal half of. Only reachable through its two handles:
/// <see cref="LocalQueueOwner"/> (the owning worker thread) and <see cref="LocalQueueStealer"/>
/// (every other thread).
/// </summary>
/// <remarks>
/// <para><b>State.</b> <c>_head</c> and <c>_tail</c> are free-running 32-bit counters; slot i lives
/// at <c>i &amp; mask</c>. Items are <c>[_head, _tail)</c>. Invariant: <c>_tail - _head</c> is between
/// 0 and the capacity. Only the owner writes <c>_tail</c>; anyone (owner included) advances
/// <c>_head</c>, always by compare-exchange.</para>
/// <para><b>Push (owner).</b>
/// 1. Read <c>_head</c> (acquire). If <c>_tail - _head</c> is below capacity, write the slot at
///    <c>_tail</c>, then publish <c>_tail + 1</c> (release): a thief that sees the new tail sees the item.
/// 2. Otherwise move half the queue plus the new item to the global queue (overflow): claim the
///    oldest half by compare-exchanging <c>_head</c> forward, which races with thieves exactly like a
///    steal; on failure retry from step 1 (a thief made room).
/// A slot the owner writes at <c>_tail</c> is never one a thief may still copy successfully: thieves
/// only keep what lies in <c>[head, tail)</c> of a head they then CAS; if the owner already reused a
/// slot, the head has moved and that thief's CAS fails.</para>
/// <para><b>Pop (owner).</b> Read head and tail; if empty return; read the slot at head; CAS head to
/// head + 1; on failure (a thief took it) retry. LIFO order is given by the separate next-job slot,
/// the ring itself is FIFO so that old work is not starved.</para>
/// <para><b>Take back the last (owner).</b> A spawned job that its spawner runs at once (join
/// helping) takes its own entry back, so that a job spawning and awaiting in a loop leaves no stale
/// entries to overflow the ring.
/// 1. If the slot at <c>_tail - 1</c> (t) does not hold the item, give up.
/// 2. Publish tail = t with a full fence, then read head (h).
/// 3. h &lt; t: the item is the owner's. A thief that read the old tail takes at most
///    ceil(count / 2) items of a count of at least 2, which ends at or before t.
/// 4. h == t: the item is the only one, and a thief may be taking it: claim it by CAS of head from t
///    to t + 1, as a thief would. Either way the ring is then empty: restore tail = t + 1.
/// 5. h &gt; t: a thief took it; restore tail = t + 1 (empty) and give up.
/// Between steps 2 and 4 a thief may read tail below head and finds nothing, as for an empty ring.</para>
/// <para><b>Steal half (thief).</b>
/// 1. Read victim head (acquire) and tail (acquire); n = ceil(count / 2); nothing to do if 0.
/// 2. Copy the n items from the victim's slots into the thief's own ring at the thief's tail
///    (the thief is the owner of its own ring, and has room: it only steals when empty).
/// 3. CAS the victim's head from head to head + n. Failure: someone else took items; retry from 1.
/// 4. Publish the thief's new tail (release).
/// The copy is speculative: the race between step 2 and another consumer is settled by the CAS.</para>
/// </remarks>
internal sealed class LocalQueue
{
    // Slots wrap the reference in a struct: a store into a WorkItem[] (an unsealed element type)
    // would pay an array-covariance type check on every push.
    private readonly Slot[] _slots;
    private readonly int _mask;
    private int _head;
    private int _tail;

    internal LocalQueue(int capacity)
    {
        if (capacity < 2 || (capacity & (capacity - 1)) != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(capacity), capacity, "The local queue capacity must be a power of two of at least 2.");
        }

        _slots = new Slot[capacity];
        _mask = capacity - 1;
    }

    internal int Capacity => _slots.Length;

    /// <summary>An estimate of the number of queued items (exact on the owner thread when no thief runs).</summary>
    internal int Count => Math.Max(0, Volatile.Read(ref _tail) - Volatile.Read(ref _head));

    internal LocalQueueOwner Owner => new(this);

    internal LocalQueueStealer Stealer => new(this);

    internal void Push(WorkItem item, Action<WorkItem[]> overflow)
    {
        while (true)
        {
            int head = Volatile.Read(ref _head);
            int tail = _tail;
            if (tail - head < _slots.Length)
            {
                _slots[tail & _mask].Item = item;
                Volatile.Write(ref _tail, tail + 1);
                return;
            }

            if (TryOverflow(head, tail, item, overflow))
            {
                return;
            }
        }
    }

    private bool TryOverflow(int head, int tail, WorkItem item, Action<WorkItem[]> overflow)
    {
        int half = (tail - head) / 2;
        Debug.Assert(half > 0, "overflow of a queue that is not full");
        var batch = new WorkItem[half + 1];
        for (int i = 0; i < half; i++)
        {
            batch[i] = _slots[(head + i) & _mask].Item!;
        }

        if (Interlocked.CompareExchange(ref _head, head + half, head) != head)
        {
            return false;
        }

        batch[half] = item;
        overflow(batch);
        return true;
    }

    internal WorkItem? Pop()
    {
        while (true)
        {
            int head = Volatile.Read(ref _head);
            int tail = _tail;
            if (tail == head)
            {
                return null;
            }

            WorkItem? item = _slots[head & _mask].Item;
            if (Interlocked.CompareExchange(ref _head, head + 1, head) == head)
            {
                return item;
            }
        }
    }

    /// <summary>Removes <paramref name="item"/> if it is the newest entry and no thief took it (owner only).</summary>
    internal bool TryTakeBackLast(WorkItem item)
    {
        int t = _tail - 1;
        if (t - Volatile.Read(ref _head) < 0 || !ReferenceEquals(_slots[t & _mask].Item, item))
        {
            return false; // step 1
        }

        Interlocked.Exchange(ref _tail, t); // step 2: full fence between the tail store and the head load
        int h = Volatile.Read(ref _head);
        if (h < t)
        {
            return true; // step 3
        }

        bool won = h == t && Interlocked.CompareExchange(ref _head, t + 1, t) == t; // step 4
        Volatile.Write(ref _tail, t + 1); // steps 4 and 5: empty either way
        return won;
    }

    /// <summary>Steals half of this queue into <paramref name="destination"/> and returns one item to run.</summary>
    internal WorkItem? StealHalfInto(LocalQueue destination)
    {
        int destTail = destination._tail;
        while (true)
        {
            int head = Volatile.Read(ref _head);
            int tail = Volatile.Read(ref _tail);
            int count = tail - head;
            if (count <= 0 || count > _slots.Length)
            {
                // Empty, or a torn read of a head that moved past the tail we read: nothing safe to take.
                if (count <= 0)
                {
                    return null;
                }

                continue;
            }

            int n = count - (count / 2);
            int room = destination._slots.Length - (destTail - Volatile.Read(ref destination._head));
            n = Math.Min(n, room + 1);

            // The oldest item is returned to run now; the rest go, in order, to the thief's ring.
            WorkItem? first = _slots[head & _mask].Item;
            for (int i = 1; i < n; i++)
            {
                destination._slots[(destTail + i - 1) & destination._mask].Item = _slots[(head + i) & _mask].Item;
            }

            if (Interlocked.CompareExchange(ref _head, head + n, head) == head)
            {
                if (n > 1)
                {
                    Volatile.Write(ref destination._tail, destTail + n - 1);
                }

                return first;
            }
        }
    }

    private struct Slot
    {
        public WorkItem? Item;
    }
}

/// <summary>The owning worker's handle on a <see cref="LocalQueue"/>: push and pop. Owner thread only.</summary>
internal readonly struct LocalQueueOwner(LocalQueue queue)
{
    internal int Count => queue.Count;

    internal void Push(WorkItem item, Action<WorkItem[]> overflow) => queue.Push(item, overflow);

    internal WorkItem? Pop() => queue.Pop();

    /// <summary>Takes <paramref name="item"/> back if it is the newest entry and no thief took it.</summary>
    internal bool TryTakeBackLast(WorkItem item) => queue.TryTakeBackLast(item);

    /// <summary>Steals half of <paramref name="victim"/> into this queue; returns one item to run now.</summary>
    internal WorkItem? StealFrom(LocalQueueStealer victim) => victim.Queue.StealHalfInto(queue);
}

/// <summary>Another thread's handle on a <see cref="LocalQueue"/>: it can only look and steal.</summary>
internal readonly struct LocalQueueStealer(LocalQueue queue)
{
    internal LocalQueue Queue => queue;

    internal bool IsEmpty => queue.Count == 0;
}
