using System;
using System.Threading;
using Myriad.Scheduling;

namespace Myriad.Coordination;

/// <summary>
/// The timers of a <see cref="TimeProvider"/> other than the system clock (a
/// <c>FakeTimeProvider</c> in tests, a scaled clock): one <see cref="TimerWheel"/> on the provider's
/// timestamps, and one timer of the provider's own (<see cref="TimeProvider.CreateTimer"/>) armed for
/// the wheel's next expiration. Time moves only as the provider says: with a fake clock, a delay
/// completes when the test advances it.
/// </summary>
/// <remarks>
/// <para><b>Protocol.</b> <c>_armedFor</c> is the wheel time the provider's timer is set for
/// (<see cref="long.MaxValue"/>: not set, or being serviced); it changes only under <c>_armGate</c>.
/// 1. Schedule: insert under the shard's lock; if the deadline is before <c>_armedFor</c>, arm.
/// 2. Arm, under <c>_armGate</c>: read the wheel's next expiration (under the shard's lock); if it
///    differs from <c>_armedFor</c>, store it and change the provider's timer to fire then; if the
///    provider's clock moved while the timer was being changed, change it again (see there).
/// 3. The provider's timer fires: under <c>_armGate</c> set <c>_armedFor</c> to "not set" (so that
///    any insert from now on arms again), advance the wheel to the provider's now, dispatch what fell
///    due, and arm for what is left.
/// The provider's timer is never changed under the shard's lock: a fake clock may run the callback
/// synchronously inside <see cref="ITimer.Change"/>, and the callback takes that lock (taking
/// <c>_armGate</c> again on the same thread is fine: it is reentrant). Arms are serialized by
/// <c>_armGate</c>, so an older arm cannot overwrite a newer, earlier one.</para>
/// </remarks>
internal sealed class ProviderTimerQueue : TimerQueue
{
    private readonly TimeProvider _provider;
    private readonly long _origin;
    private readonly long _frequency;
    private readonly TimerShard _shard = new(0);
    private readonly TimerBatch _batch = new();
    private readonly Lock _armGate = new();
    private readonly ITimer _timer;
    private long _armedFor = long.MaxValue;

    internal ProviderTimerQueue(TimeProvider provider)
    {
        _provider = provider;
        _origin = provider.GetTimestamp();
        _frequency = provider.TimestampFrequency;
        _timer = provider.CreateTimer(static q => ((ProviderTimerQueue)q!).OnTimer(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    internal override int Count => _shard.Count;

    private long Now(bool roundUp) => MillisecondsSince(_origin, _provider.GetTimestamp(), _frequency, roundUp);

    /// <summary>Step 1.</summary>
    internal override void Schedule(ITimerNode entry, TimeSpan delay, JobRuntime? runtime)
    {
        long deadline = _shard.Insert(entry, Now(roundUp: true) + DelayMilliseconds(delay), runtime);
        if (deadline < Volatile.Read(ref _armedFor))
        {
            Arm();
        }
    }

    /// <summary>Step 2.</summary>
    private void Arm()
    {
        lock (_armGate)
        {
            long next;
            lock (_shard.Gate)
            {
                next = _shard.Wheel.NextExpiration();
            }

            if (next == _armedFor)
            {
                return;
            }

            Volatile.Write(ref _armedFor, next);
            if (next == long.MaxValue)
            {
                _timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
                return;
            }

            // From the provider's now to the start of millisecond `next`, in the provider's ticks,
            // rounded up: rounded down, a clock coarser than a millisecond (10 ticks a second) fired
            // the timer before `next`, step 3 advanced the wheel to a millisecond short of it, fired
            // nothing and armed again with nothing left to wait: tens of thousands of callbacks per
            // delay, spinning until the clock ticked over.
            long dueTimestamp = _origin + (next / 1000 * _frequency) + (((next % 1000 * _frequency) + 999) / 1000);
            while (true)
            {
                long before = _provider.GetTimestamp();
                long remaining = Math.Max(0, dueTimestamp - before);
                var due = TimeSpan.FromTicks((long)Math.Ceiling(remaining * ((double)TimeSpan.TicksPerSecond / _frequency)));
                _timer.Change(due, Timeout.InfiniteTimeSpan);

                // Step 2a. Change counts `due` from the provider's time when it runs, not from
                // `before`: a fake clock advanced in between (by a test, on its own thread) would
                // set the timer that much too late, or forever past an advance that should have
                // fired it. Arm again while the clock moved by more than the wheel's millisecond,
                // unless the timer fired meanwhile (its callback, run inside Change, rearmed).
                if (remaining == 0 || Volatile.Read(ref _armedFor) != next || _provider.GetTimestamp() - before <= _frequency / 1000)
                {
                    return;
                }
            }
        }
    }

    /// <summary>Step 3.</summary>
    private void OnTimer()
    {
        lock (_armGate)
        {
            Volatile.Write(ref _armedFor, long.MaxValue);
            lock (_shard.Gate)
            {
                _shard.Wheel.Advance(Now(roundUp: false), _batch);
            }

            // Dispatched under _armGate: the batch is this queue's one buffer, and two callbacks
            // (a late one of the provider's, and one run inside Change) must not share it.
            _batch.Dispatch();
        }

        Arm();
    }
}
