using System.Threading;

namespace Myriad.Coordination;

/// <summary>
/// One lock and the <see cref="TimerWheel"/> it guards: a timer queue is one or more shards, and a
/// scheduled <see cref="TimerEntry"/> names its shard so that a cancel takes only that lock.
/// </summary>
internal sealed class TimerShard(long start)
{
    /// <summary>Guards <see cref="Wheel"/> and the scheduled entries' fields. Sections are a few pointer moves and never run user code.</summary>
    internal readonly Lock Gate = new();

    internal readonly TimerWheel Wheel = new(start);

    /// <summary>
    /// Adds <paramref name="entry"/> due at <paramref name="deadline"/> ms, to run on
    /// <paramref name="runtime"/>; returns the deadline as stored (one already passed is moved to the wheel's now).
    /// </summary>
    internal long Insert(ITimerNode entry, long deadline, Scheduling.JobRuntime? runtime)
    {
        lock (Gate)
        {
            ref TimerLinks links = ref entry.Links;
            links.Deadline = deadline;
            entry.TimerRuntime = runtime;
            entry.Shard = this;
            Wheel.Insert(entry);
            return links.Deadline;
        }
    }

    /// <summary>Removes a scheduled entry of this shard; false if it already left (fired or canceled).</summary>
    internal bool Remove(ITimerNode entry)
    {
        lock (Gate)
        {
            if (!ReferenceEquals(entry.Shard, this))
            {
                return false;
            }

            Wheel.Remove(entry);
            entry.Shard = null;
            entry.TimerRuntime = null;
            return true;
        }
    }

    /// <summary>Timers pending in this shard.</summary>
    internal int Count
    {
        get
        {
            lock (Gate)
            {
                return Wheel.Count;
            }
        }
    }
}
