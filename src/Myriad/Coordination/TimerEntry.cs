using System.Diagnostics;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Coordination;

/// <summary>
/// Anything a <see cref="TimerWheel"/> can hold: it carries its own links (intrusive, so a pending
/// delay is one object, not a cell plus an entry) and names the work item to run when it is due.
/// </summary>
/// <remarks>
/// <para>States: idle (<see cref="Shard"/> null, <see cref="TimerLinks.Slot"/> -1) -> scheduled (in one
/// wheel slot's list, <see cref="Shard"/> names the wheel's owner, <see cref="TimerRuntime"/> the
/// runtime to run on) -> idle again when it fires or is canceled. Every link, the shard and the runtime
/// are guarded by the owning shard's lock while the node is scheduled; <see cref="Shard"/> is also read
/// without it, by a cancel, which then checks it again under the lock. An idle node may be scheduled
/// again (a pooled delay reuses itself), on any shard.</para>
/// <para>The wheel slots are intrusive doubly linked lists, so that inserting and canceling cost
/// O(1) and a canceled node is unreachable from the wheel at once: no tombstone waits for the due
/// time.</para>
/// <para>The shard and the runtime are properties rather than fields of <see cref="TimerLinks"/> so
/// that the node of a plain <c>Job.Delay</c>, the one a million sleepers each hold, can keep them
/// where it already has room (see <see cref="DelayCell"/>): 16 bytes less per pending delay.</para>
/// </remarks>
internal interface ITimerNode
{
    /// <summary>The node's place in a wheel; a field of the implementing object.</summary>
    ref TimerLinks Links { get; }

    /// <summary>What runs when the timer fires.</summary>
    WorkItem Target { get; }

    /// <summary>The runtime the target runs on while scheduled (null: the thread pool, or idle).</summary>
    JobRuntime? TimerRuntime { get; set; }

    /// <summary>
    /// The shard whose wheel holds the node; null when idle. A node that can never be canceled may
    /// keep none (always null): only <see cref="TimerQueue.Cancel"/> reads it.
    /// </summary>
    TimerShard? Shard { get; set; }
}

/// <summary>The wheel bookkeeping of one <see cref="ITimerNode"/>, stored inside the node.</summary>
/// <remarks>
/// The deadline and the slot share one 64-bit word (<see cref="_deadlineAndSlot"/>): the slot in the
/// low <see cref="SlotBits"/> bits, the deadline above them. That keeps the struct at three words,
/// and a <see cref="DelayCell"/>, the node of every pending <c>Job.Delay</c>, at 64 bytes: a million
/// sleepers each pay for their node until it fires, and every byte of it is copied by the
/// collections it survives. A deadline keeps 54 bits of milliseconds (about 285,000 years
/// either side of the queue's origin); the slot needs 9 (<see cref="TimerWheel"/> has 6 x 64 slots).
/// </remarks>
internal struct TimerLinks
{
    /// <summary>Bits of <see cref="_deadlineAndSlot"/> that hold <see cref="SlotPlusOne"/>.</summary>
    private const int SlotBits = 10;

    private const long SlotMask = (1L << SlotBits) - 1;

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
    private JobRuntime? _runtime;
    private TimerShard? _shard;

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

    /// <inheritdoc/>
    public JobRuntime? TimerRuntime
    {
        get => _runtime;
        set => _runtime = value;
    }

    /// <summary>The owning shard, null when idle.</summary>
    public TimerShard? Shard
    {
        get => System.Threading.Volatile.Read(ref _shard);
        set => System.Threading.Volatile.Write(ref _shard, value);
    }
}
