using System.Diagnostics;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Coordination;

/// <summary>
/// Anything a <see cref="TimerWheel"/> can hold: it carries its own links (intrusive, so a pending
/// delay is one object, not a cell plus an entry) and names the work item to run when it is due.
/// </summary>
/// <remarks>
/// <para>States: idle (<see cref="TimerLinks.Shard"/> null, <see cref="TimerLinks.Slot"/> -1) ->
/// scheduled (in one wheel slot's list, <see cref="TimerLinks.Shard"/> names the wheel's owner) ->
/// idle again when it fires or is canceled. Every link is guarded by the owning shard's lock while the
/// node is scheduled. An idle node may be scheduled again (a pooled delay reuses itself), on any
/// shard.</para>
/// <para>The wheel slots are intrusive doubly linked lists, so that inserting and canceling cost
/// O(1) and a canceled node is unreachable from the wheel at once: no tombstone waits for the due
/// time.</para>
/// </remarks>
internal interface ITimerNode
{
    /// <summary>The node's place in a wheel; a field of the implementing object.</summary>
    ref TimerLinks Links { get; }

    /// <summary>What runs when the timer fires.</summary>
    WorkItem Target { get; }
}

/// <summary>The wheel bookkeeping of one <see cref="ITimerNode"/>, stored inside the node.</summary>
/// <remarks>
/// The deadline and the slot share one 64-bit word (<see cref="_deadlineAndSlot"/>): the slot in the
/// low <see cref="SlotBits"/> bits, the deadline above them. That keeps the struct at five words,
/// and a <see cref="DelayCell"/>, the node of every pending <c>Job.Delay</c>, at 80 bytes instead of
/// 88: a million sleepers each pay for their node until it fires, and every byte of it is copied
/// by the collections it survives. A deadline keeps 54 bits of milliseconds (about 285,000 years
/// either side of the queue's origin); the slot needs 9 (<see cref="TimerWheel"/> has 6 x 64 slots).
/// </remarks>
internal struct TimerLinks
{
    /// <summary>Bits of <see cref="_deadlineAndSlot"/> that hold <see cref="SlotPlusOne"/>.</summary>
    private const int SlotBits = 10;

    private const long SlotMask = (1L << SlotBits) - 1;

    /// <summary>The runtime the target runs on; null: the thread pool.</summary>
    internal JobRuntime? Runtime;

    /// <summary>The shard whose wheel holds the node; null when idle.</summary>
    internal TimerShard? Shard;

    /// <summary>Neighbours in the slot's list (null at the ends).</summary>
    internal ITimerNode? Previous;

    /// <summary>Neighbours in the slot's list (null at the ends).</summary>
    internal ITimerNode? Next;

    /// <summary><see cref="Deadline"/> shifted left by <see cref="SlotBits"/>, with <see cref="SlotPlusOne"/> in the low bits.</summary>
    private long _deadlineAndSlot;

    /// <summary>When the timer is due, in the owning queue's milliseconds.</summary>
    internal long Deadline
    {
        readonly get => _deadlineAndSlot >> SlotBits; // arithmetic: a negative deadline survives too
        set
        {
            Debug.Assert(value == (value << SlotBits) >> SlotBits, "a deadline fits in 54 bits");
            _deadlineAndSlot = (value << SlotBits) | (_deadlineAndSlot & SlotMask);
        }
    }

    /// <summary>The wheel slot (level * 64 + slot) the node is linked into, plus one; 0 when in none (so a zeroed struct is idle).</summary>
    internal int SlotPlusOne
    {
        readonly get => (int)(_deadlineAndSlot & SlotMask);
        set
        {
            Debug.Assert((uint)value <= SlotMask, "a slot fits in SlotBits bits");
            _deadlineAndSlot = (_deadlineAndSlot & ~SlotMask) | (long)value;
        }
    }

    /// <summary>The wheel slot (level * 64 + slot) the node is linked into; -1 when in none.</summary>
    internal readonly int Slot => SlotPlusOne - 1;
}

/// <summary>
/// A timer node for an owner that cannot be one itself (it already derives from another class, or
/// has several timers): a small separate object that names the owner as its target.
/// </summary>
internal sealed class TimerEntry(WorkItem target) : ITimerNode
{
    private TimerLinks _links;

    /// <inheritdoc/>
    public WorkItem Target { get; } = target;

    /// <inheritdoc/>
    public ref TimerLinks Links => ref _links;

    /// <summary>When the timer is due (tests and diagnostics; the wheel uses <see cref="Links"/>).</summary>
    internal long Deadline
    {
        get => _links.Deadline;
        set => _links.Deadline = value;
    }

    /// <summary>The wheel slot, -1 when in none (tests).</summary>
    internal int Slot => _links.Slot;

    /// <summary>The owning shard, null when idle.</summary>
    internal TimerShard? Shard => System.Threading.Volatile.Read(ref _links.Shard);
}
