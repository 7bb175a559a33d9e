using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Coordination;

/// <summary>
/// One pending timer: when it is due, the work item to run then (on <see cref="Runtime"/>, or on the
/// .NET thread pool when that is null), and its place in a <see cref="TimerWheel"/>.
/// </summary>
/// <remarks>
/// <para>States: idle (<see cref="Shard"/> null, <see cref="Slot"/> -1) -> scheduled (in one wheel
/// slot's list, <see cref="Shard"/> names the wheel's owner) -> idle again when it fires or is
/// canceled. Every field except <see cref="Target"/> is guarded by the owning shard's lock while the
/// entry is scheduled. An idle entry may be scheduled again (a pooled delay reuses its entry), on any
/// shard.</para>
/// <para>The wheel slots are intrusive doubly linked lists (<see cref="Previous"/>, <see cref="Next"/>),
/// so that inserting and canceling cost O(1) and a canceled entry is unreachable from the wheel at
/// once: no tombstone waits for the due time.</para>
/// </remarks>
internal sealed class TimerEntry(WorkItem target)
{
    /// <summary>What runs when the timer fires.</summary>
    internal readonly WorkItem Target = target;

    /// <summary>The runtime <see cref="Target"/> runs on; null: the thread pool.</summary>
    internal JobRuntime? Runtime;

    /// <summary>The shard whose wheel holds the entry; null when idle.</summary>
    internal TimerShard? Shard;

    /// <summary>When the timer is due, in the owning queue's milliseconds.</summary>
    internal long Deadline;

    /// <summary>Neighbours in the slot's list (null at the ends).</summary>
    internal TimerEntry? Previous;

    /// <summary>Neighbours in the slot's list (null at the ends).</summary>
    internal TimerEntry? Next;

    /// <summary>The wheel slot (level * 64 + slot) the entry is linked into; -1 when in none.</summary>
    internal int Slot = -1;
}
