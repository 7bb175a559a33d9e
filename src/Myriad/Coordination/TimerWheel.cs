using System.Diagnostics;
using System.Numerics;

namespace Myriad.Coordination;

/// <summary>
/// A hierarchical timing wheel (Varghese and Lauck's scheme, laid out as Tokio's): 6 levels of 64
/// slots at a resolution of one millisecond. Inserting and removing a timer cost O(1); firing costs
/// O(1) per timer plus one move per level it cascades through (at most 5). Not thread-safe: the
/// owning <see cref="TimerShard"/>'s lock guards it.
/// </summary>
/// <remarks>
/// <para><b>Layout.</b> Level <c>k</c> has 64 slots of <c>64^k</c> ms each, so it spans <c>64^(k+1)</c> ms
/// (level 0: 64 ms; level 5: about 795 days). A timer due at <c>when</c> goes to the lowest level whose
/// span, aligned on <see cref="Elapsed"/>, contains <c>when</c>: the level of the highest bit in which
/// <c>Elapsed</c> and <c>when</c> differ, 6 bits a level; its slot is that level's 6 bits of
/// <c>when</c>. Each slot is an intrusive doubly linked list of <see cref="TimerEntry"/>, and each level
/// has a 64-bit occupancy mask, so the next non-empty slot is one rotate and one count of trailing
/// zeros away.</para>
/// <para><b>Invariants.</b> (1) Every entry's deadline is at or after <see cref="Elapsed"/>. (2) A
/// level-0 entry sits in the slot of its exact deadline. (3) A slot of level 1 or above at the
/// current position of its level is empty, except at the top level for deadlines beyond the wheel's
/// span (those are clamped to the top level, whose slots then act as a ring: the slot is reached
/// again after one full turn, and its entries are re-inserted).</para>
/// <para><b>Advancing</b> to <c>now</c> processes the earliest non-empty slot whose start is at or before
/// <c>now</c>, in order: <see cref="Elapsed"/> becomes that start; each entry whose deadline is
/// reached fires, the others are re-inserted (they cascade to a lower level, closer to their exact
/// slot). Then <see cref="Elapsed"/> becomes <c>now</c>.</para>
/// </remarks>
internal sealed class TimerWheel
{
    /// <summary>Bits of the deadline each level resolves: 64 slots a level, Tokio's choice (one 64-bit occupancy mask per level).</summary>
    internal const int LevelBits = 6;

    /// <summary>Slots per level.</summary>
    internal const int SlotsPerLevel = 1 << LevelBits;

    /// <summary>Levels: 6 levels of 64 slots span 2^36 ms (about 795 days), more than the longest delay accepted (about 49.7 days).</summary>
    internal const int Levels = 6;

    /// <summary>The span of the whole wheel in milliseconds.</summary>
    internal const long Span = 1L << (LevelBits * Levels);

    private const int SlotMask = SlotsPerLevel - 1;

    private readonly ITimerNode?[] _heads = new ITimerNode?[Levels * SlotsPerLevel];
    private readonly ulong[] _occupied = new ulong[Levels];
    private long _elapsed;
    private int _count;

    /// <summary>Creates an empty wheel whose time starts at <paramref name="start"/> ms.</summary>
    internal TimerWheel(long start = 0) => _elapsed = start;

    /// <summary>The wheel's now: every timer due at or before it has fired.</summary>
    internal long Elapsed => _elapsed;

    /// <summary>Timers in the wheel.</summary>
    internal int Count => _count;

    /// <summary>
    /// Adds <paramref name="entry"/> (idle) at its <see cref="TimerEntry.Deadline"/>; a deadline already
    /// passed is moved to <see cref="Elapsed"/> (it fires at the next advance).
    /// </summary>
    internal void Insert(ITimerNode entry)
    {
        ref TimerLinks links = ref entry.Links;
        Debug.Assert(links.Slot < 0, "an entry is in at most one slot");
        if (links.Deadline < _elapsed)
        {
            links.Deadline = _elapsed;
        }

        Link(entry);
        _count++;
    }

    /// <summary>Removes <paramref name="entry"/> from its slot; false if it is in no slot.</summary>
    internal bool Remove(ITimerNode entry)
    {
        int index = entry.Links.Slot;
        if (index < 0)
        {
            return false;
        }

        Unlink(entry, index);
        _count--;
        return true;
    }

    /// <summary>
    /// The start of the earliest non-empty slot: when <see cref="Advance"/> has something to do (fire,
    /// or cascade); <see cref="long.MaxValue"/> when the wheel is empty.
    /// </summary>
    internal long NextExpiration() => NextExpiration(out _, out _);

    /// <summary>
    /// Fires every timer due at or before <paramref name="now"/> into <paramref name="fired"/> (each
    /// leaves the wheel), and moves <see cref="Elapsed"/> to <paramref name="now"/> (never backwards).
    /// </summary>
    internal void Advance(long now, TimerBatch fired)
    {
        while (true)
        {
            long start = NextExpiration(out int level, out int slot);
            if (start > now)
            {
                break;
            }

            ProcessSlot(level, slot, start, fired);
        }

        if (now > _elapsed)
        {
            _elapsed = now;
        }
    }

    private long NextExpiration(out int level, out int slot)
    {
        for (level = 0; level < Levels; level++)
        {
            ulong occupied = _occupied[level];
            if (occupied == 0)
            {
                continue;
            }

            int shift = level * LevelBits;
            int current = (int)((_elapsed >> shift) & SlotMask);
            slot = (current + BitOperations.TrailingZeroCount(BitOperations.RotateRight(occupied, current))) & SlotMask;
            long slotSpan = 1L << shift;
            long levelSpan = slotSpan << LevelBits;
            long start = (_elapsed & ~(levelSpan - 1)) + (slot * slotSpan);
            if (level > 0 && start <= _elapsed)
            {
                // Invariant 3: only the top level holds a slot at or behind its current position,
                // for deadlines beyond the span; it is due one turn later.
                Debug.Assert(level == Levels - 1, "only the top level wraps");
                start += levelSpan;
            }

            return start;
        }

        slot = 0;
        return long.MaxValue;
    }

    private void ProcessSlot(int level, int slot, long start, TimerBatch fired)
    {
        if (start > _elapsed)
        {
            _elapsed = start;
        }

        int index = (level * SlotsPerLevel) + slot;
        ITimerNode? entry = _heads[index];
        _heads[index] = null;
        _occupied[level] &= ~(1UL << slot);
        while (entry is not null)
        {
            ref TimerLinks links = ref entry.Links;
            ITimerNode? next = links.Next;
            links.Previous = null;
            links.Next = null;
            links.SlotPlusOne = 0;
            if (links.Deadline <= _elapsed)
            {
                _count--;
                fired.Add(entry);
            }
            else
            {
                Link(entry); // cascades: closer to Elapsed now, so a lower level (or the same top slot one turn on)
            }

            entry = next;
        }
    }

    private void Link(ITimerNode entry)
    {
        ref TimerLinks links = ref entry.Links;
        long when = links.Deadline;
        int level = LevelFor(_elapsed, when);
        int slot = (int)((when >> (level * LevelBits)) & SlotMask);
        int index = (level * SlotsPerLevel) + slot;
        ITimerNode? head = _heads[index];
        links.Previous = null;
        links.Next = head;
        if (head is not null)
        {
            head.Links.Previous = entry;
        }

        _heads[index] = entry;
        links.SlotPlusOne = index + 1;
        _occupied[level] |= 1UL << slot;
    }

    private void Unlink(ITimerNode entry, int index)
    {
        ref TimerLinks links = ref entry.Links;
        ITimerNode? previous = links.Previous;
        ITimerNode? next = links.Next;
        if (previous is null)
        {
            _heads[index] = next;
            if (next is null)
            {
                _occupied[index >> LevelBits] &= ~(1UL << (index & SlotMask));
            }
        }
        else
        {
            previous.Links.Next = next;
        }

        if (next is not null)
        {
            next.Links.Previous = previous;
        }

        links.Previous = null;
        links.Next = null;
        links.SlotPlusOne = 0;
    }

    /// <summary>The level of the highest bit in which the two times differ, clamped to the top level.</summary>
    internal static int LevelFor(long elapsed, long when)
    {
        long masked = (elapsed ^ when) | SlotMask;
        if (masked >= Span)
        {
            masked = Span - 1;
        }

        int significant = 63 - BitOperations.LeadingZeroCount((ulong)masked);
        return significant / LevelBits;
    }
}
