using System.Threading;

namespace Myriad.Coordination;

/// <summary>
/// One recycled waiter kept by a host (a mutex, a semaphore, a wait group) for its next wait: a lock
/// hand-off chain waits on the same host over and over, so a waiter returns where it will be needed
/// next, without touching the thread-local pools. Channels keep none (<see cref="None"/>).
/// </summary>
/// <remarks>
/// <para><b>Protocol.</b> <c>_waiter</c> holds a fully reset waiter or null.
/// 1. Take (under the host's lock, so takers are serialized): read the slot; if it holds a waiter of
///    the wanted type, clear the slot and use the waiter.
/// 2. Keep (any thread, no lock, after the waiter's outcome was consumed and the waiter reset): if
///    the slot reads empty, publish the waiter there with a release write; otherwise decline (the
///    caller returns it to its pool).
/// A keeper may overwrite another keeper's waiter, or a take may clear a waiter just kept: such a waiter
/// is simply left to the garbage collector. No waiter is ever handed out twice: it enters the slot once
/// per release, and only one taker at a time can find it there.</para>
/// </remarks>
internal struct SpareWaiter
{
    /// <summary>
    /// The slot of a host that keeps no spare (a channel: one more field in each of a million
    /// channels costs more than the thread-local pool it saves). It holds a marker that is no waiter,
    /// so step 1 never finds a waiter there and step 2 always declines: nobody ever writes it.
    /// </summary>
    internal static SpareWaiter None = new() { _waiter = new object() };

    private object? _waiter;

    /// <summary>Step 1 (host lock held).</summary>
    internal T? TakeLocked<T>()
        where T : class
    {
        if (Volatile.Read(ref _waiter) is T waiter)
        {
            _waiter = null;
            return waiter;
        }

        return null;
    }

    /// <summary>Step 2 (no lock).</summary>
    internal bool TryKeep(object waiter)
    {
        if (Volatile.Read(ref _waiter) is not null)
        {
            return false;
        }

        Volatile.Write(ref _waiter, waiter);
        return true;
    }
}
