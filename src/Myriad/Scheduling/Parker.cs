using System;
using System.Diagnostics;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

/// <summary>
/// Puts one thread to sleep until another unparks it: a binary permit, as in Java's LockSupport or
/// Tokio's parker.
/// </summary>
/// <remarks>
/// States of <c>_state</c>: Empty (0), Parked (1: the owner sleeps or is about to), Notified (2: a
/// permit is pending).
/// Park (owner only):
/// 1. If a permit is pending (Notified -> Empty), consume it and return.
/// 2. A parker built with a spin budget (and a wait that is not a zero-timeout poll) first spins
///    for that long, staying Empty, and consumes a permit that arrives meanwhile (Notified -> Empty)
///    without ever sleeping. The unparker then sees Empty and skips the monitor: the hand-off costs
///    a cache-line transfer instead of a futex call on each side and a context switch.
/// 3. Empty -> Parked, then sleep on the monitor while the state is Parked.
/// 4. Reset to Empty on the way out (consuming the permit that woke it).
/// Unpark (any thread):
/// 1. Exchange the state to Notified.
/// 2. If it was Parked, take the monitor and pulse. Taking the monitor orders the pulse after the
///    owner's check-then-wait, which happens under the same monitor, so the wake-up cannot fall
///    between the owner's check and its wait.
/// A permit given before Park makes that Park return immediately; permits do not accumulate.
/// </remarks>
internal sealed class Parker
{
    private const int Empty = 0;
    private const int Parked = 1;
    private const int Notified = 2;

    private readonly object _gate = new();
    private readonly long _spinTicks;
    private int _state;

    /// <summary>A parker that sleeps at once.</summary>
    internal Parker()
    {
    }

    /// <summary>A parker that spins for <paramref name="spin"/> before it sleeps (step 2).</summary>
    internal Parker(TimeSpan spin)
    {
        _spinTicks = spin <= TimeSpan.Zero ? 0 : (long)(spin.TotalSeconds * Stopwatch.Frequency);
    }

    /// <summary>Sleeps until unparked or until the timeout; returns true if a permit was consumed.</summary>
    internal bool Park(int millisecondsTimeout = Timeout.Infinite)
    {
        if (Interlocked.CompareExchange(ref _state, Empty, Notified) == Notified)
        {
            return true;
        }

        if (_spinTicks != 0 && millisecondsTimeout != 0 && SpinForPermit())
        {
            return true;
        }

        lock (_gate)
        {
            if (Interlocked.CompareExchange(ref _state, Parked, Empty) == Notified)
            {
                Volatile.Write(ref _state, Empty);
                return true;
            }

            while (Volatile.Read(ref _state) == Parked)
            {
                if (!Monitor.Wait(_gate, millisecondsTimeout) && millisecondsTimeout != Timeout.Infinite)
                {
                    break;
                }
            }

            return Interlocked.Exchange(ref _state, Empty) == Notified;
        }
    }

    /// <summary>Step 2: true if a permit arrived (and was consumed) within the spin budget.</summary>
    private bool SpinForPermit()
    {
        long deadline = Stopwatch.GetTimestamp() + _spinTicks;
        int round = 0;
        do
        {
            // Hazard: on a machine with more runnable threads than cores, the thread that would
            // give the permit may be waiting for the very core this spin holds. A yield now and
            // then lets it run here; with nothing else runnable, a yield returns at once.
            if (++round % MyriadDefaults.ParkYieldEvery == 0)
            {
                Thread.Yield();
            }
            else
            {
                Thread.SpinWait(MyriadDefaults.ParkSpinBatch);
            }

            if (Volatile.Read(ref _state) == Notified && Interlocked.CompareExchange(ref _state, Empty, Notified) == Notified)
            {
                return true;
            }
        }
        while (Stopwatch.GetTimestamp() < deadline);

        return false;
    }

    /// <summary>Gives the permit and wakes the owner if it sleeps.</summary>
    internal void Unpark()
    {
        if (Interlocked.Exchange(ref _state, Notified) == Parked)
        {
            lock (_gate)
            {
                Monitor.Pulse(_gate);
            }
        }
    }
}
