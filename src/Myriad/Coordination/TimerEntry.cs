using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Coordination;

/// <summary>
/// One pending timer in the <see cref="TimerQueue"/>: when it is due, and the work item to run then
/// (on <see cref="Runtime"/>, or on the .NET thread pool when that is null).
/// </summary>
/// <remarks>
/// Every field is guarded by the queue's lock while the entry is in the heap. <see cref="HeapIndex"/>
/// is the entry's slot in the heap, or -1 once it left (fired or canceled): that is what makes
/// <see cref="TimerQueue.Cancel"/> O(log n) and lets it tell a timer that already fired from one it
/// removed. An entry may be scheduled again after it left the heap (a pooled delay reuses its entry).
/// </remarks>
internal sealed class TimerEntry(WorkItem target)
{
    /// <summary>What runs when the timer fires.</summary>
    internal readonly WorkItem Target = target;

    /// <summary>The runtime <see cref="Target"/> runs on; null: the thread pool.</summary>
    internal JobRuntime? Runtime;

    /// <summary>When the timer is due, in <see cref="System.Diagnostics.Stopwatch"/> ticks.</summary>
    internal long Deadline;

    /// <summary>Breaks deadline ties in scheduling order, so timers due at the same tick fire FIFO.</summary>
    internal long Sequence;

    /// <summary>The entry's slot in the heap; -1 when not scheduled.</summary>
    internal int HeapIndex = -1;

    /// <summary>Heap order: earlier deadline first, then earlier scheduling.</summary>
    internal bool FiresBefore(TimerEntry other) =>
        Deadline < other.Deadline || (Deadline == other.Deadline && Sequence < other.Sequence);
}
