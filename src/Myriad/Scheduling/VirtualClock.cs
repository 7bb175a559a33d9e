using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Coordination;
using Myriad.Internal;

namespace Myriad.Scheduling;

/// <summary>
/// The virtual clock of a <see cref="DeterministicRuntime"/>: time that moves when the runtime has
/// nothing to run (or has run <see cref="Internal.MyriadDefaults.BusyClockSteps"/> steps without going
/// idle), and then jumps straight to the next timer, as in a discrete-event simulation.
/// An hour of delays takes no real time, and a run replays the same way whatever the machine's speed.
/// </summary>
/// <remarks>
/// <para><b>Time.</b> Virtual now starts at <see cref="Epoch"/> and advances in whole milliseconds (the
/// timer wheel's resolution; delays round up). <see cref="GetTimestamp"/> ticks at
/// <see cref="TimeSpan.TicksPerSecond"/>; <see cref="LocalTimeZone"/> is UTC, so that nothing of the
/// machine leaks into a run.</para>
/// <para><b>Protocol</b> (timers live in one <see cref="TimerWheel"/> under its shard's lock).
/// 1. Schedule: the deadline is virtual now plus the delay; insert. Nothing wakes: time only moves
///    at step 2.
/// 2. The runtime's driving thread finds nothing runnable (or has run the busy-step limit since the
///    last move) and calls <see cref="TryAdvance"/>: the
///    wheel advances slot by slot (cascades included) to the first slot that fires, and virtual now
///    becomes that instant. Every timer due at that instant is in the batch.
/// 3. The batch is put in an order drawn from a generator seeded from the runtime's seed, then
///    queued on the runtimes in that order; the runtime then picks among them by its own seed.
/// Timers due at one instant therefore fire in seeded order: the same seed gives the same order,
/// every run.</para>
/// </remarks>
internal sealed class VirtualClock : TimeProvider
{
    /// <summary>Virtual time zero: 2000-01-01 00:00 UTC, a fixed instant so that runs do not depend on the machine's clock.</summary>
    internal static readonly DateTimeOffset Epoch = new(2000, 1, 1, 0, 0, 0, TimeSpan.Zero);

    /// <summary>The last virtual instant, in milliseconds since <see cref="Epoch"/>, that a <see cref="DateTimeOffset"/> can hold.</summary>
    /// <remarks>In whole ticks: the double of <c>TotalMilliseconds</c> rounds up to the first millisecond past the end (midnight of year 10000), where a tick of a ticker of whole days lands.</remarks>
    private static readonly long s_lastRepresentableMs = (DateTimeOffset.MaxValue - Epoch).Ticks / TimeSpan.TicksPerMillisecond;

    private readonly JobRuntime _runtime;
    private readonly TimerShard _shard = new(0);
    private readonly TimerBatch _batch = new();
    private readonly Random _random;
    private long _nowMs;

    /// <summary>A clock whose timers run on <paramref name="runtime"/> by default, ties ordered from <paramref name="seed"/>.</summary>
    internal VirtualClock(JobRuntime runtime, int seed)
    {
        _runtime = runtime;

        // A stream of its own (the runtime's generator picks jobs): mixing the seed keeps the two
        // sequences unrelated while both stay functions of the one seed.
        _random = new Random(unchecked((seed * -1640531535) ^ 0x5A17C10C));
        Timers = new Queue(this);
    }

    /// <summary>The queue that <see cref="Job.Delay(TimeSpan, CancellationToken)"/> and select timeouts use on this clock.</summary>
    internal TimerQueue Timers { get; }

    /// <summary>Virtual time since <see cref="Epoch"/>.</summary>
    internal TimeSpan Elapsed => TimeSpan.FromMilliseconds(Volatile.Read(ref _nowMs));

    /// <inheritdoc/>
    public override DateTimeOffset GetUtcNow() => Epoch + Elapsed;

    /// <inheritdoc/>
    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    /// <inheritdoc/>
    public override long GetTimestamp() => Volatile.Read(ref _nowMs) * TimeSpan.TicksPerMillisecond;

    /// <inheritdoc/>
    public override TimeZoneInfo LocalTimeZone => TimeZoneInfo.Utc;

    /// <summary>A timer of this clock; its callback runs on the clock's runtime.</summary>
    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        ArgumentNullException.ThrowIfNull(callback);
        return new VirtualTimer(this, callback, state, dueTime, period);
    }

    /// <summary>
    /// Steps 2 and 3: moves virtual now to the next instant at which a timer fires and queues every
    /// timer due then, in seeded order. False when no timer is pending (time stands still). Called by
    /// the runtime's driving thread only.
    /// </summary>
    internal bool TryAdvance()
    {
        lock (_shard.Gate)
        {
            TimerWheel wheel = _shard.Wheel;
            while (_batch.Count == 0)
            {
                long next = wheel.NextExpiration();
                if (next == long.MaxValue)
                {
                    return false;
                }

                if (next > s_lastRepresentableMs)
                {
                    // Only a timer that fires again and again with nothing else finishing (an
                    // unstopped ticker beside stuck jobs) gets here: say so, rather than let the
                    // next reading of the clock fail in DateTimeOffset's arithmetic.
                    throw new InvalidOperationException(
                        $"Virtual time would pass {DateTimeOffset.MaxValue:yyyy-MM-dd}: a timer keeps firing (a ticker that is never stopped, say) while the run does not finish. Stop tickers when their jobs end, or look for a job that waits forever.");
                }

                wheel.Advance(next, _batch); // a cascade only moves timers down a level; the loop goes on to the slot that fires
            }

            Volatile.Write(ref _nowMs, wheel.Elapsed);
            _batch.Shuffle(_random);
        }

        _batch.Dispatch();
        return true;
    }

    private void Schedule(ITimerNode entry, TimeSpan delay, JobRuntime? runtime) =>
        _shard.Insert(entry, Volatile.Read(ref _nowMs) + TimerQueue.DelayMilliseconds(delay), runtime ?? _runtime);

    /// <summary>Step 1, as a <see cref="TimerQueue"/>.</summary>
    private sealed class Queue(VirtualClock clock) : TimerQueue
    {
        internal override int Count => clock._shard.Count;

        internal override void Schedule(ITimerNode entry, TimeSpan delay, JobRuntime? runtime) => clock.Schedule(entry, delay, runtime);
    }

    /// <summary>
    /// A <see cref="TimeProvider.CreateTimer"/> timer on virtual time: a timer entry whose work item
    /// runs the callback on the clock's runtime (and re-arms a periodic timer first).
    /// </summary>
    /// <remarks>
    /// A firing that was already handed to the runtime when <see cref="Change"/> or
    /// <see cref="Dispose"/> ran must not call back: it is recognized by the timer being disarmed, or
    /// by its entry being back in the wheel (re-armed after that firing).
    /// </remarks>
    private sealed class VirtualTimer : WorkItem, ITimer
    {
        private readonly VirtualClock _clock;
        private readonly TimerEntry _entry;
        private readonly TimerCallback _callback;
        private readonly object? _state;
        private readonly Lock _gate = new();
        private TimeSpan _period;
        private bool _armed;
        private bool _disposed;

        internal VirtualTimer(VirtualClock clock, TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
        {
            _clock = clock;
            _callback = callback;
            _state = state;
            _entry = new TimerEntry(this);
            Change(dueTime, period);
        }

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            TimerQueue.ThrowIfInvalid(dueTime, nameof(dueTime));
            TimerQueue.ThrowIfInvalid(period, nameof(period));
            lock (_gate)
            {
                if (_disposed)
                {
                    return false;
                }

                TimerQueue.Cancel(_entry);
                _period = period;
                _armed = dueTime != Timeout.InfiniteTimeSpan;
                if (_armed)
                {
                    _clock.Schedule(_entry, dueTime, null);
                }

                return true;
            }
        }

        internal override void Execute(PerThread state)
        {
            lock (_gate)
            {
                if (!_armed || _disposed || _entry.Shard is not null)
                {
                    return;
                }

                _armed = _period != Timeout.InfiniteTimeSpan && _period != TimeSpan.Zero;
                if (_armed)
                {
                    _clock.Schedule(_entry, _period, null);
                }
            }

            try
            {
                _callback(_state);
            }
            catch (Exception failure)
            {
                // As for a System.Threading.Timer callback: an unhandled exception, raised off the
                // runtime's thread so that the scheduler's bookkeeping is not skipped.
                ThrowHelper.ContinuationFailed(failure);
            }
        }

        public void Dispose()
        {
            lock (_gate)
            {
                _disposed = true;
                _armed = false;
                TimerQueue.Cancel(_entry);
            }
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return default;
        }
    }
}
