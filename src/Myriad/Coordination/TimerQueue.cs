using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Scheduling;

namespace Myriad.Coordination;

/// <summary>
/// A clock's timer service: where <see cref="Job.Delay(TimeSpan, CancellationToken)"/> and select
/// timeouts put their <see cref="TimerEntry"/>. One queue per <see cref="TimeProvider"/>:
/// <see cref="SystemTimerQueue"/> for <see cref="TimeProvider.System"/> (sharded wheels and a driver
/// thread), <see cref="ProviderTimerQueue"/> for any other provider (one wheel, woken by the
/// provider's own timer), and a <see cref="VirtualClock"/>'s queue for a
/// <see cref="DeterministicRuntime"/>.
/// </summary>
/// <remarks>
/// <para><b>Which clock.</b> A timer started on a runtime thread uses that runtime's
/// <see cref="JobRuntime.TimeProvider"/>; one started elsewhere uses the system clock; an explicit
/// provider (<see cref="Job.Delay(TimeSpan, TimeProvider, CancellationToken)"/>) wins over both.</para>
/// <para><b>Where timer work runs.</b> An entry remembers the runtime it was started from (whatever
/// the clock). When it is due its work item is queued on that runtime, or on the .NET thread pool
/// for a timer started outside any runtime (see <see cref="TimerBatch"/>). Timer drivers never run
/// user code, so a slow continuation cannot delay other timers, and a job that awaits a delay
/// resumes on its own runtime.</para>
/// <para><b>Cancel</b> takes only the lock of the shard that holds the entry: true means the entry left
/// the wheel before it fired and never will; false means it already fired (or was never scheduled).</para>
/// </remarks>
internal abstract class TimerQueue
{
    /// <summary>
    /// The longest delay accepted, as for <see cref="System.Threading.Tasks.Task.Delay(TimeSpan)"/>:
    /// 2^32 - 2 milliseconds (about 49.7 days), so that a deadline never overflows.
    /// </summary>
    internal static readonly TimeSpan MaxDelay = TimeSpan.FromMilliseconds(uint.MaxValue - 1.0);

    private static readonly ConditionalWeakTable<TimeProvider, TimerQueue> s_byProvider = new();

    /// <summary>
    /// The runtime the calling code runs on, or null: the one place timers look it up (the scheduler
    /// context of a worker or of a thread driving a single-threaded runtime).
    /// </summary>
    internal static JobRuntime? CurrentRuntime => SchedulerContext.Current?.Runtime;

    /// <summary>The timer queue of <paramref name="provider"/>'s clock (created on first use, kept as long as the provider lives).</summary>
    internal static TimerQueue For(TimeProvider provider)
    {
        if (ReferenceEquals(provider, TimeProvider.System))
        {
            return SystemTimerQueue.Instance;
        }

        if (provider is VirtualClock clock)
        {
            return clock.Timers;
        }

        return s_byProvider.GetValue(provider, static p => new ProviderTimerQueue(p));
    }

    /// <summary>Schedules <paramref name="entry"/> after <paramref name="delay"/> on the clock of the current runtime (the system clock outside any).</summary>
    internal static void Schedule(ITimerNode entry, TimeSpan delay)
    {
        ScheduleOn(entry, delay, CurrentRuntime);
    }

    /// <summary>Schedules <paramref name="entry"/> after <paramref name="delay"/> on <paramref name="runtime"/>'s clock (the system clock for null), to run there.</summary>
    internal static void ScheduleOn(ITimerNode entry, TimeSpan delay, JobRuntime? runtime) =>
        (runtime?.Timers ?? SystemTimerQueue.Instance).Schedule(entry, delay, runtime);

    /// <summary>Removes a pending timer; true if it will now never fire, false if it already fired.</summary>
    internal static bool Cancel(ITimerNode entry) => entry.Shard is { } shard && shard.Remove(entry);

    /// <summary>Validates a public delay argument (<see cref="Timeout.InfiniteTimeSpan"/> is the caller's business).</summary>
    internal static void ThrowIfInvalid(TimeSpan delay, string paramName)
    {
        if ((delay < TimeSpan.Zero && delay != Timeout.InfiniteTimeSpan) || delay > MaxDelay)
        {
            throw new ArgumentOutOfRangeException(paramName, delay, "The delay must be Timeout.InfiniteTimeSpan or between zero and about 49.7 days (2^32 - 2 milliseconds).");
        }
    }

    /// <summary>
    /// <paramref name="entry"/>'s work item will run on <paramref name="runtime"/> (null: the thread
    /// pool) once <paramref name="delay"/> (validated, finite) has passed on this queue's clock.
    /// </summary>
    internal abstract void Schedule(ITimerNode entry, TimeSpan delay, JobRuntime? runtime);

    /// <summary>Timers pending in this queue (diagnostics and tests).</summary>
    internal abstract int Count { get; }

    /// <summary>
    /// Milliseconds from <paramref name="origin"/> to <paramref name="timestamp"/> of a clock ticking at
    /// <paramref name="frequency"/>, rounded down or up, without overflow for any uptime.
    /// </summary>
    internal static long MillisecondsSince(long origin, long timestamp, long frequency, bool roundUp)
    {
        long ticks = timestamp - origin;
        long whole = ticks / frequency;
        long rest = ticks % frequency * 1000;
        long ms = rest / frequency;
        if (roundUp && rest % frequency != 0)
        {
            ms++;
        }

        return (whole * 1000) + ms;
    }

    /// <summary>A delay in whole milliseconds, rounded up: a timer never fires early.</summary>
    internal static long DelayMilliseconds(TimeSpan delay) =>
        (delay.Ticks + TimeSpan.TicksPerMillisecond - 1) / TimeSpan.TicksPerMillisecond;
}
