using System;
using System.Runtime.CompilerServices;
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
/// <para><b>State.</b> <c>_tail</c> and the head are free-running 32-bit counters; slot i lives at
/// <c>i &amp; mask</c>. Items are <c>[head, _tail)</c>. Invariant: <c>_tail - head</c> is between 0
/// and the capacity. Only the owner writes <c>_tail</c> and the slots. The head is the low half of
/// <c>_headWord</c>; its high half is an epoch that the owner bumps whenever it lowers the tail.
/// Anyone (owner included) advances the head, always by compare-exchange of the whole word.</para>
/// <para><b>Why the epoch.</b> A thief reads the head, then the tail, then copies and commits by
/// compare-exchange of the head. Between its two reads the owner may push and then lower the tail
/// again (take back, trim), several times; a thief that commits a range computed from a tail it
/// read before the owner lowered it could take an item the owner took back, and leave the head
/// past the tail, so that the owner's next push is lost. Every tail decrease therefore ends with a
/// compare-exchange that bumps the epoch at the head it saw: a thief that read the word before
/// fails its commit, and one that reads it after sees the lowered tail. (A thief would have to
/// stall for 2^32 tail decreases at one head for its word to match again.)</para>
/// <para><b>Push (owner).</b>
/// 1. Read the head (acquire). If <c>_tail - head</c> is below capacity, write the slot at
///    <c>_tail</c>, then publish <c>_tail + 1</c> (release): a thief that sees the new tail sees the item.
/// 2. Otherwise move half the queue plus the new item to the global queue (overflow): claim the
///    oldest half by compare-exchanging the head forward, which races with thieves exactly like a
///    steal; on failure retry from step 1 (a thief made room).</para>
/// <para><b>Pop (owner).</b> Read head and tail; if empty return; read the slot at head; CAS head to
/// head + 1; on failure (a thief took it), or if the entry was cleared, retry. LIFO order is given by the separate next-job slot,
/// the ring itself is FIFO so that old work is not starved.</para>
/// <para><b>Lower the tail (owner): take back the newest, trim cleared entries.</b>
/// 1. Read the head word (h). Decide the new tail t' from it (h &lt;= t' &lt; tail).
/// 2. Publish tail = t' (release), then compare-exchange the head word from (h, epoch) to
///    (h, epoch + 1). The exchange is a full fence after the tail store.
/// 3. Success: no thief committed since step 1, none that read the word before can commit, and
///    every later thief sees t'. Failure: a thief committed; restore the old tail (every thief's
///    range ended within it) and retry from step 1 with the new head, or give up.</para>
/// <para><b>Take back the last.</b> A spawned job that its spawner runs at once (join helping)
/// takes its own entry back, so that a job spawning and awaiting in a loop leaves no stale entries
/// to overflow the ring: lower the tail by one while the slot at <c>tail - 1</c> holds the item
/// and the head is at or below it; a head past it means a thief took it.</para>
/// <para><b>Cleared entries (owner).</b> Join helping also runs a spawned job that is not the
/// newest entry (a parent awaiting the first of the children it just spawned). Its entry cannot be
/// taken back, since it lies below others, so the owner clears it: it writes null into the slot.
/// Only the owner writes slots, so a slot that holds the item is its entry; a thief may already
/// have copied it, so clearing gives no ownership: the caller owns the item by other means (the
/// spawn's claim), and a copy that got away is a stale entry, as without clearing. A cleared entry
/// still counts in <c>[head, _tail)</c>: every consumer (pop, steal, overflow) skips nulls. After a
/// take-back the owner trims the cleared entries that now end the ring (lowering the tail past
/// them, as above): a parent that awaits its children in order clears all but the last and takes
/// that one back, and the room of all of them comes back instead of the ring filling with nulls
/// and overflowing.</para>
/// <para><b>Steal half (thief).</b>
/// 1. Read the victim's head word (acquire), then its tail (acquire); n = ceil(count / 2);
///    nothing to do if 0.
///    n is capped at the room in the thief's own ring plus one.
/// 2. Copy the n entries, skipping cleared ones, into the thief's own ring at the thief's tail
///    (the thief owns its ring); the first entry that is not cleared is kept aside to run.
/// 3. CAS the victim's head word from (head, epoch) to (head + n, epoch). Failure: someone else
///    took items or the owner lowered the tail; retry from 1.
/// 4. Publish the thief's new tail (release). If all n entries were cleared, retry from 1.
/// The copy is speculative: the race between step 2 and another consumer is settled by the CAS.</para>
/// </remarks>
internal sealed class LocalQueue
{
    // Slots wrap the reference in a struct: a store into a WorkItem[] (an unsealed element type)
    // would pay an array-covariance type check on every push.
    private readonly Slot[] _slots;
    private readonly int _mask;
    private long _headWord;
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

    /// <summary>An estimate of the number of queued entries, cleared ones included (exact on the owner thread when no thief runs).</summary>
    internal int Count => Math.Max(0, Volatile.Read(ref _tail) - Head);

    private int Head => HeadOf(Volatile.Read(ref _headWord));

    private static int HeadOf(long word) => (int)word;

    /// <summary>The word with its head replaced, epoch kept.</summary>
    private static long WithHead(long word, int head) => (word & ~0xFFFF_FFFFL) | (uint)head;

    /// <summary>The word with its epoch bumped, head kept (wraps harmlessly).</summary>
    private static long NextEpoch(long word) => unchecked(word + (1L << 32));

    internal LocalQueueOwner Owner => new(this);

    internal LocalQueueStealer Stealer => new(this);

    // AggressiveOptimization here and below: optimized from the first call, so that one-shot
    // programs do not run the spawn path as tier-0 code (docs/design.md, "Cold runs").
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal void Push(WorkItem item, Action<WorkItem[]> overflow)
    {
        while (true)
        {
            long word = Volatile.Read(ref _headWord);
            int head = HeadOf(word);
            int tail = _tail;
            if (tail - head < _slots.Length)
            {
                _slots[tail & _mask].Item = item;
                Volatile.Write(ref _tail, tail + 1);
                return;
            }

            if (TryOverflow(word, tail, item, overflow))
            {
                return;
            }
        }
    }

    private bool TryOverflow(long word, int tail, WorkItem item, Action<WorkItem[]> overflow)
    {
        int head = HeadOf(word);
        int half = (tail - head) / 2;
        Debug.Assert(half > 0, "overflow of a queue that is not full");
        var batch = new WorkItem[half + 1];
        int kept = 0;
        for (int i = 0; i < half; i++)
        {
            if (_slots[(head + i) & _mask].Item is { } queued)
            {
                batch[kept++] = queued; // cleared entries do not travel
            }
        }

        if (Interlocked.CompareExchange(ref _headWord, WithHead(word, head + half), word) != word)
        {
            return false;
        }

        batch[kept] = item;
        if (kept < half)
        {
            Array.Resize(ref batch, kept + 1);
        }

        overflow(batch);
        return true;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal WorkItem? Pop()
    {
        while (true)
        {
            long word = Volatile.Read(ref _headWord);
            int head = HeadOf(word);
            int tail = _tail;
            if (tail == head)
            {
                return null;
            }

            WorkItem? item = _slots[head & _mask].Item;
            if (Interlocked.CompareExchange(ref _headWord, WithHead(word, head + 1), word) == word && item is not null)
            {
                return item; // a cleared entry is skipped
            }
        }
    }

    /// <summary>Removes <paramref name="item"/> if it is the newest entry and no thief took it (owner only).</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal bool TryTakeBackLast(WorkItem item)
    {
        int tail = _tail;
        int t = tail - 1;
        if (!ReferenceEquals(_slots[t & _mask].Item, item))
        {
            return false;
        }

        while (true)
        {
            long word = Volatile.Read(ref _headWord); // step 1
            if (t - HeadOf(word) < 0)
            {
                return false; // a thief took it
            }

            Volatile.Write(ref _tail, t); // step 2
            if (Interlocked.CompareExchange(ref _headWord, NextEpoch(word), word) == word)
            {
                return true; // step 3
            }

            Volatile.Write(ref _tail, tail);
        }
    }

    /// <summary>
    /// Takes <paramref name="item"/> back if it is the newest entry and no thief took it, then trims
    /// the cleared entries that end the ring (owner only).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal bool TryTakeBackLastAndTrim(WorkItem item)
    {
        if (!TryTakeBackLast(item))
        {
            return false;
        }

        TrimCleared();
        return true;
    }

    /// <summary>
    /// Clears <paramref name="item"/>'s entry if it is among the <paramref name="depth"/> newest
    /// (owner only; see "Cleared entries"). No ownership: a thief may hold a copy already.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal void Forget(WorkItem item, int depth)
    {
        int tail = _tail;
        int low = tail - Math.Min(depth, tail - Head);
        for (int i = tail - 1; i - low >= 0; i--)
        {
            ref Slot slot = ref _slots[i & _mask];
            if (ReferenceEquals(slot.Item, item))
            {
                slot.Item = null;
                return;
            }
        }
    }

    /// <summary>Lowers the tail past the cleared entries that end the ring; gives up if a thief gets in the way.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private void TrimCleared()
    {
        int tail = _tail;
        long word = Volatile.Read(ref _headWord); // step 1
        int k = 0;
        while (k < tail - HeadOf(word) && _slots[(tail - 1 - k) & _mask].Item is null)
        {
            k++;
        }

        if (k == 0)
        {
            return;
        }

        Volatile.Write(ref _tail, tail - k); // step 2
        if (Interlocked.CompareExchange(ref _headWord, NextEpoch(word), word) != word)
        {
            Volatile.Write(ref _tail, tail); // step 3: the cleared entries stay, to be skipped
        }
    }

    /// <summary>Steals half of this queue into <paramref name="destination"/> and returns one item to run.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal WorkItem? StealHalfInto(LocalQueue destination)
    {
        int destTail = destination._tail;
        while (true)
        {
            long word = Volatile.Read(ref _headWord);
            int head = HeadOf(word);
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
            int room = destination._slots.Length - (destTail - destination.Head);
            n = Math.Min(n, room + 1);

            // The oldest item is returned to run now; the rest go, in order, to the thief's ring.
            // Cleared entries are dropped: if all n were cleared, the steal took nothing to run.
            WorkItem? first = null;
            int copied = 0;
            for (int i = 0; i < n; i++)
            {
                WorkItem? item = _slots[(head + i) & _mask].Item;
                if (item is null)
                {
                    continue;
                }

                if (first is null)
                {
                    first = item;
                }
                else
                {
                    destination._slots[(destTail + copied) & destination._mask].Item = item;
                    copied++;
                }
            }

            if (Interlocked.CompareExchange(ref _headWord, WithHead(word, head + n), word) == word)
            {
                if (copied > 0)
                {
                    Volatile.Write(ref destination._tail, destTail + copied);
                }

                if (first is not null)
                {
                    return first;
                }

                // Only cleared entries: look again, entries may remain past them. Each round moved
                // the head forward, so this ends.
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

    /// <summary><see cref="TryTakeBackLast"/>, then trims the cleared entries that end the ring.</summary>
    internal bool TryTakeBackLastAndTrim(WorkItem item) => queue.TryTakeBackLastAndTrim(item);

    /// <summary>Clears <paramref name="item"/>'s entry if it is among the <paramref name="depth"/> newest; no ownership.</summary>
    internal void Forget(WorkItem item, int depth) => queue.Forget(item, depth);

    /// <summary>Steals half of <paramref name="victim"/> into this queue; returns one item to run now.</summary>
    internal WorkItem? StealFrom(LocalQueueStealer victim) => victim.Queue.StealHalfInto(queue);
}

/// <summary>Another thread's handle on a <see cref="LocalQueue"/>: it can only look and steal.</summary>
internal readonly struct LocalQueueStealer(LocalQueue queue)
{
    internal LocalQueue Queue => queue;

    internal bool IsEmpty => queue.Count == 0;
}
