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
/// 16-bit version token of a job handle.</para>
/// <para><b>Protocol.</b> Registration and release run under a lock; lookups read the slot array
/// without one. A slot is written (release store) before the id is handed out and cleared only when
/// the runtime's disposal completes, so a reader that holds an id of a live runtime always finds it.</para>
/// </remarks>
internal static class RuntimeRegistry
{
    /// <summary>The owner of a job that suspended outside every runtime (a direct call on a plain thread).</summary>
    internal const short Foreign = -1;

    /// <summary>Ids 1..MaxId; -1 and 0 are reserved, negative ids are not used.</summary>
    private const int MaxId = short.MaxValue;

    private static readonly Lock s_lock = new();
    private static readonly JobRuntime?[] s_slots = new JobRuntime?[MaxId + 1];
    private static readonly Queue<short> s_released = new();
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
                throw new InvalidOperationException($"More than {MaxId} Myriad runtimes are alive at once; dispose runtimes that are no longer used.");
            }

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
                Volatile.Write(ref s_slots[id], null);
                s_released.Enqueue(id);
            }
        }
    }

    /// <summary>The live runtime with this id, or null once it was disposed.</summary>
    internal static JobRuntime? Find(short id) => id > 0 ? Volatile.Read(ref s_slots[id]) : null;
}
