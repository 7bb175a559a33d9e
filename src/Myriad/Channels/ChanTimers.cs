using System;
using System.Threading;
using Myriad.Coordination;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Channels;

public static partial class Chan
{
    /// <summary>
    /// A channel that receives the current time once, after <paramref name="delay"/>: Go's
    /// <c>time.After</c>, for a select case (<c>Select.Receive(Chan.After(timeout))</c>). Time is
    /// measured and read on the clock of the runtime it is called from (<see cref="JobRuntime.TimeProvider"/>:
    /// virtual on a <see cref="DeterministicRuntime"/>), the system clock outside any runtime.
    /// </summary>
    /// <remarks>The channel has room for that one item, so the timer never waits for a receiver; it is
    /// never closed. The timer runs on that clock's timer queue and stays scheduled until it fires, even
    /// if nobody receives: for a timeout that is often abandoned, prefer <see cref="SelectBuilder.Timeout"/>
    /// (disarmed when the select ends) or a <see cref="Ticker"/> (stoppable).
    /// <see cref="Timeout.InfiniteTimeSpan"/> gives a channel that never receives anything, and
    /// <see cref="TimeSpan.Zero"/> one that holds the time already.</remarks>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> is negative (other than infinite) or longer than about 49.7 days.</exception>
    public static ReceiveOnlyChan<DateTimeOffset> After(TimeSpan delay)
    {
        TimerQueue.ThrowIfInvalid(delay, nameof(delay));
        Chan<DateTimeOffset> channel = Bounded<DateTimeOffset>(1);
        if (delay == TimeSpan.Zero)
        {
            // As Job.Delay(TimeSpan.Zero) completes at once: the time is in the channel when it is
            // returned. A timer would deliver it only at the wheel's next tick, a millisecond or more.
            channel.TrySend(TimeSender.ClockOf(SchedulerContext.Current?.Runtime).GetUtcNow());
        }
        else if (delay != Timeout.InfiniteTimeSpan)
        {
            var sender = new TimeSender(channel, period: TimeSpan.Zero);
            sender.Start(delay);
        }

        return channel;
    }

    /// <summary>
    /// A ticker: its channel receives the current time every <paramref name="period"/> (Go's
    /// <c>time.NewTicker</c>), on the clock of the runtime it is created from, as for <see cref="After"/>.
    /// Stop it with <see cref="Ticker.Stop"/> or <see cref="Ticker.Dispose"/>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="period"/> is not positive, is infinite, or is longer than about 49.7 days.</exception>
    public static Ticker Ticker(TimeSpan period) => new(period);
}

/// <summary>
/// Sends the time on a channel when its timer fires: once (<c>Chan.After</c>), or every period (a
/// <see cref="Ticker"/>). It is its timer entry's work item, run on the runtime it was started from.
/// </summary>
/// <remarks>
/// <para><b>Stop protocol</b> (a tick races a stop; <c>_stopped</c> is set once and never cleared).
/// 1. Stop sets <c>_stopped</c>, then cancels the entry (removing it if it is still in the heap).
/// 2. A tick, running after the timer thread removed the entry, returns at once if <c>_stopped</c> is
///    set; otherwise it sends (dropping the tick if the previous one was not received, as Go does) and
///    schedules the entry again, at the first point of its cadence after now.
/// 3. After scheduling, the tick reads <c>_stopped</c> again and cancels the entry if it is set.
/// Either step 1's cancel finds the entry in the heap, or step 3's read sees the flag (the schedule and
/// the flag write are ordered by the timer queue's lock and the interlocked write), so a stopped ticker
/// never stays scheduled, and no tick is sent once Stop has returned and any running tick has finished.</para>
/// </remarks>
internal sealed class TimeSender : WorkItem
{
    private readonly Chan<DateTimeOffset> _channel;
    private readonly TimeSpan _period;
    private readonly TimerEntry _entry;
    private readonly JobRuntime? _runtime;

    /// <summary>
    /// The clock of the runtime the sender started on (the system clock outside any runtime): the
    /// clock its timer queue counts in. The cadence and the time sent must come from it too, or a
    /// ticker on a virtual clock (a DeterministicRuntime, a fake TimeProvider) would compute its next
    /// delay from real time that barely moves, and send times no seed or test clock controls.
    /// </summary>
    private readonly TimeProvider _clock;

    /// <summary>The clock's timestamp when the ticker started: the origin of its cadence.</summary>
    private long _start;

    /// <summary>
    /// The next point of the cadence, in <see cref="TimeSpan"/> ticks since <see cref="_start"/>. Kept in
    /// those exact units rather than the clock's: converted to a clock coarser than the period's
    /// remainder (10 ticks a second against 150 ms), the period was truncated and the ticker ran fast.
    /// </summary>
    private long _next;
    private int _stopped;

    internal TimeSender(Chan<DateTimeOffset> channel, TimeSpan period)
    {
        _channel = channel;
        _period = period;
        _entry = new TimerEntry(this);
        _runtime = SchedulerContext.Current?.Runtime;
        _clock = ClockOf(_runtime);
    }

    /// <summary>The clock a time channel started on <paramref name="runtime"/> counts in and reads (see <c>_clock</c>).</summary>
    internal static TimeProvider ClockOf(JobRuntime? runtime) => runtime?.TimeProvider ?? TimeProvider.System;

    internal void Start(TimeSpan delay)
    {
        _start = _clock.GetTimestamp();
        _next = delay.Ticks;
        TimerQueue.ScheduleOn(_entry, delay, _runtime);
    }

    /// <summary>Step 1.</summary>
    internal void Stop()
    {
        Interlocked.Exchange(ref _stopped, 1);
        TimerQueue.Cancel(_entry);
    }

    /// <summary>Step 2 and 3.</summary>
    internal override void Execute(PerThread state)
    {
        if (Volatile.Read(ref _stopped) != 0)
        {
            return;
        }

        _channel.TrySend(_clock.GetUtcNow()); // full: the last tick is still unread, drop this one
        if (_period <= TimeSpan.Zero)
        {
            return;
        }

        // The next tick keeps to the original cadence, at its first point after now: as Go's ticker
        // does, a tick delivered late (a busy runtime, a clock that jumped, a period below the
        // wheel's millisecond) drops the points it missed instead of firing again at once, which
        // handed the receiver two ticks back to back (or at one virtual instant).
        long period = _period.Ticks;
        long now = _clock.GetElapsedTime(_start).Ticks;
        _next += period;
        if (_next <= now)
        {
            _next += period * (((now - _next) / period) + 1);
        }

        TimerQueue.ScheduleOn(_entry, TimeSpan.FromTicks(_next - now), _runtime);
        if (Volatile.Read(ref _stopped) != 0)
        {
            TimerQueue.Cancel(_entry);
        }
    }
}
