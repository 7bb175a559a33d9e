using System;
using System.Threading;

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
/// 2. Empty -> Parked, then sleep on the monitor while the state is Parked.
/// 3. Reset to Empty on the way out (consuming the permit that woke it).
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
    private int _state;

    /// <summary>Sleeps until unparked or until the timeout; returns true if a permit was consumed.</summary>
    internal bool Park(int millisecondsTimeout = Timeout.Infinite)
    {
        if (Interlocked.CompareExchange(ref _state, Empty, Notified) == Notified)
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
