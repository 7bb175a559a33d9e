using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

/// <summary>
/// Guest runs: a thread that is not one of the workers claims one of this runtime's spawned jobs and
/// runs it inline (a plain thread in <c>Wait()</c> or <c>Run</c>, see <see cref="GuestContext"/>). On a
/// runtime whose disposal drains, the workers must not leave while such a run is under way: what the
/// job queues when it suspends (the rest of the job) is then still run by the drain instead of being
/// canceled. Without this, a <c>Dispose</c> from another thread returned while a plain thread still ran
/// its job, and the rest of the job ended canceled.
/// </summary>
/// <remarks>
/// <para>State: every thread that ever ran a guest run of this runtime has a <see cref="GuestSlot"/> in
/// <see cref="_guestSlots"/> (a copy-on-write array, replaced under <see cref="_guestSlotsLock"/>), and
/// caches its slot of the runtime it last ran a guest run of (<see cref="PerThread.GuestSlot"/>). A
/// slot's <see cref="GuestSlot.Runs"/> counts that thread's guest runs under way (nested runs count
/// twice); only its thread writes it. A slot is dropped from the array when a later registration
/// finds its thread dead and its count 0.</para>
/// <para>Protocol, with the workers' exit check (<see cref="Worker"/>'s loop) and a draining spare's:
/// 1. The guest raises its slot's count with a plain write, then claims the job with a compare-and-swap,
///    a full fence: a worker that dequeues the job's entry and reads the claim taken (a volatile read,
///    an acquire), and so may see an empty queue, has seen the claim, and with it the raised count
///    (and the slot, which was published before it).
/// 2. A worker leaves after the disposal only when no work is visible, then every slot reads 0, then
///    still no work is visible: the guest of step 3 queues before it lowers its count, and one of
///    step 1 raises its count before it takes its job's entry back out of the global queue. While a
///    count is above 0 the worker looks again every <see cref="MyriadDefaults.HelpLoopParkMilliseconds"/>
///    (nothing wakes it for the end of a guest run). A spare thread leaves the drain once every slot
///    reads 0 and then no work is visible.
/// 3. The guest lowers its count with a release write once the job returned to it (suspended or done):
///    anything the job queued is in a queue before the count reads 0.
/// Neither side uses an atomic read-modify-write of a shared count: a plain thread's spawn-and-wait
/// pays two plain writes here, where a shared counter cost it two atomic operations (about 13 ns on
/// the machine the compare tool runs on, a tenth of the whole round trip).</para>
/// </remarks>
public abstract partial class JobRuntime
{
    /// <summary>The slots of the threads that ran guest runs here; see the remarks above.</summary>
    private GuestSlot[] _guestSlots = [];

    private readonly Lock _guestSlotsLock = new();

    /// <summary>Step 1 of the protocol, before the claim; null when the thread needs no slot (a worker, or a runtime that cancels at disposal).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal GuestSlot? EnterGuestRun(PerThread thread)
    {
        if (!NeedsSpawnFence(thread))
        {
            return null;
        }

        GuestSlot? slot = thread.GuestSlot;
        if (slot is null || slot.Owner != _guestSlotsLock)
        {
            slot = thread.GuestSlot = SlotFor(thread.Thread);
        }

        slot.Runs++; // plain: only this thread writes it; the claim's compare-and-swap publishes it
        return slot;
    }

    /// <summary>Step 3 of the protocol, after the job returned to the guest.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void ExitGuestRun(GuestSlot slot) => Volatile.Write(ref slot.Runs, slot.Runs - 1);

    /// <summary>Whether a guest run is under way (step 2 of the protocol).</summary>
    internal bool HasGuests
    {
        get
        {
            foreach (GuestSlot slot in Volatile.Read(ref _guestSlots))
            {
                if (Volatile.Read(ref slot.Runs) != 0)
                {
                    return true;
                }
            }

            return false;
        }
    }

    /// <summary>This runtime's slot of <paramref name="thread"/>, registered if new (rare: once per thread, or again after the thread ran guest runs of another runtime).</summary>
    private GuestSlot SlotFor(Thread thread)
    {
        lock (_guestSlotsLock)
        {
            GuestSlot[] slots = _guestSlots;
            foreach (GuestSlot slot in slots)
            {
                if (slot.Thread == thread)
                {
                    return slot;
                }
            }

            var added = new GuestSlot(thread, _guestSlotsLock);
            GuestSlot[] next = Array.FindAll(slots, static s => s.Thread.IsAlive || Volatile.Read(ref s.Runs) != 0);
            Array.Resize(ref next, next.Length + 1);
            next[^1] = added;
            Volatile.Write(ref _guestSlots, next);
            return added;
        }
    }
}

/// <summary>
/// One thread's guest runs of one runtime (see <c>JobRuntime.GuestRuns.cs</c>). Names its runtime by
/// an object of the runtime's own (its slot lock), not by the runtime: a thread's cached slot must not
/// keep a disposed runtime reachable, and an id could be reused by a later runtime.
/// </summary>
internal sealed class GuestSlot(Thread thread, Lock owner)
{
    internal readonly Thread Thread = thread;

    /// <summary>The runtime's slot lock: identifies the runtime without holding it.</summary>
    internal readonly Lock Owner = owner;

    /// <summary>Guest runs under way; written only by <see cref="Thread"/>.</summary>
    internal int Runs;
}
