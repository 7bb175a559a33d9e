using System;
using System.Collections.Generic;
using System.Threading;

namespace Myriad.Scheduling;

/// <summary>
/// Gives every live runtime a 16-bit id, so that a suspended job can name its runtime in the two
/// bytes of padding its cell already has (a reference would add 8 bytes to every pending job; see
/// <see cref="Jobs.JobCell"/>'s owner field).
/// </summary>
/// <remarks>
/// <para><b>Ids.</b> 0 is "no runtime" and <see cref="Foreign"/> (-1) marks a job that runs outside
/// every runtime; runtimes get 1..32767 and then the ids of disposed runtimes, oldest release first.
/// A job of a disposed runtime whose id is still free reads null here and is canceled (see
/// <see cref="JobRuntime"/>'s disposal rules).</para>
/// <para><b>Limit.</b> An id is reused only after 32,767 runtimes were created, and then in the order
/// their runtimes were disposed. A job suspended on a runtime that was disposed, and woken after its
/// id went to a runtime created later, would be scheduled on that later runtime; that takes a job
/// left pending through the creation of over 32,000 other runtimes. The same kind of limit as the
/// version token of a job handle.</para>
/// <para><b>Protocol.</b> Registration and release run under a lock; lookups read the slot array
/// without one. A slot is written (release store) before the id is handed out and cleared only when
/// the runtime's disposal completes, so a reader that holds an id of a live runtime always finds it.</para>
/// <para><b>Refusing resumes.</b> A second, per-id flag says that the runtime of that id will never
/// run a resumed job again (see <see cref="RefusesResumes"/>): a hand-off (a channel item, a lock) is
/// then not given to a job waiting there. A single-threaded runtime raises it when its disposal
/// starts, every runtime at the latest when the disposal completes; registering the id anew lowers it.</para>
/// </remarks>
internal static class RuntimeRegistry
{
    /// <summary>The owner of a job that suspended outside every runtime (a direct call on a plain thread).</summary>
    internal const short Foreign = -1;

    /// <summary>Ids 1..MaxId; -1 and 0 are reserved, negative ids are not used.</summary>
    private const int MaxId = short.MaxValue;

    private static readonly Lock s_lock = new();
    private static readonly JobRuntime?[] s_slots = new JobRuntime?[MaxId + 1];

    /// <summary>Per id: true once that runtime runs no resumed job any more (see <see cref="RefusesResumes"/>).</summary>
    private static readonly bool[] s_refusing = new bool[MaxId + 1];

    /// <summary>
    /// How many entries of <c>s_refusing</c> are set (written under the lock). Zero in a process that
    /// never disposed a runtime, so that the hand-off path's check costs one load there.
    /// </summary>
    private static int s_refusingCount;
    private static readonly Queue<short> s_released = new();

    /// <summary>
    /// Per id: the runtime that held it last, once released, until the id is registered anew (see
    /// <see cref="FindForCount"/>). Weak: a disposed runtime nobody references any more has nobody
    /// left to read its counts either.
    /// </summary>
    private static readonly WeakReference<JobRuntime>?[] s_retired = new WeakReference<JobRuntime>?[MaxId + 1];
    private static int s_fresh;

    internal static short Register(JobRuntime runtime)
    {
        lock (s_lock)
        {
            short id;
            if (s_fresh < MaxId)
            {
                id = (short)++s_fresh;
            }
            else if (!s_released.TryDequeue(out id))
            {
                throw new InvalidOperationException($"More than {MaxId} Myriad runtimes exist undisposed at once; dispose runtimes that are no longer used (a runtime stays registered until it is disposed, even when nothing references it).");
            }

            SetRefusing(id, false);
            s_retired[id] = null;
            Volatile.Write(ref s_slots[id], runtime);
            return id;
        }
    }

    internal static void Release(JobRuntime runtime)
    {
        lock (s_lock)
        {
            short id = runtime.Id;
            if (ReferenceEquals(s_slots[id], runtime))
            {
                SetRefusing(id, true);
                Volatile.Write(ref s_retired[id], new WeakReference<JobRuntime>(runtime));
                Volatile.Write(ref s_slots[id], null);
                s_released.Enqueue(id);
            }
        }
    }

    /// <summary>
    /// Marks <paramref name="runtime"/> as running no resumed job from now on, before its disposal
    /// completes (a single-threaded runtime, whose queue abandons every resume once disposed).
    /// </summary>
    internal static void RefuseResumes(JobRuntime runtime)
    {
        lock (s_lock)
        {
            if (ReferenceEquals(s_slots[runtime.Id], runtime))
            {
                SetRefusing(runtime.Id, true);
            }
        }
    }

    /// <summary>
    /// Whether a job suspended on the runtime of this id can never run again (its runtime is disposed,
    /// or disposing and past the point where it runs resumed jobs). False for 0 and
    /// <see cref="Foreign"/>. One load on the hand-off path of every channel and primitive.
    /// </summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    internal static bool RefusesResumes(short id) => id > 0 && Volatile.Read(ref s_refusing[id]);

    /// <summary>
    /// Whether any runtime refuses resumes: the gate of the hand-off path's check. Read without the
    /// lock; a claim that races a disposal is covered by the give-back, not by this check (see
    /// <c>JobCell.ConsumerCannotRun</c>).
    /// </summary>
    internal static bool AnyRefusing
    {
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
        get => Volatile.Read(ref s_refusingCount) != 0;
    }

    /// <summary>Sets an entry of <c>s_refusing</c> and keeps the count; under the lock.</summary>
    private static void SetRefusing(short id, bool value)
    {
        if (s_refusing[id] != value)
        {
            Volatile.Write(ref s_refusing[id], value);
            Volatile.Write(ref s_refusingCount, s_refusingCount + (value ? 1 : -1));
        }
    }

    /// <summary>The live runtime with this id, or null once it was disposed.</summary>
    internal static JobRuntime? Find(short id) => id > 0 ? Volatile.Read(ref s_slots[id]) : null;

    /// <summary>
    /// The runtime with this id, live or released, for counting a job's completion: a job that was
    /// suspended when its runtime's disposal completed may still end later (canceled, see
    /// <c>StateMachineBox.Abandon</c>), and the disposed runtime's counts must still see it end (a
    /// draining runtime's metrics stay measured until they do). Null once the runtime was collected.
    /// Subject to the same id reuse as <see cref="Find"/>.
    /// </summary>
    internal static JobRuntime? FindForCount(short id)
    {
        if (id <= 0)
        {
            return null;
        }

        if (Volatile.Read(ref s_slots[id]) is { } live)
        {
            return live;
        }

        // The slot is cleared after the weak reference is written (Release), so a runtime released
        // between the two reads is found here.
        return Volatile.Read(ref s_retired[id]) is { } retired && retired.TryGetTarget(out JobRuntime? runtime) ? runtime : Volatile.Read(ref s_slots[id]);
    }
}
