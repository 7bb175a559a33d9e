using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

/// <summary>
/// The spawn fence: a spawn made on another thread while the runtime is being disposed is either
/// refused (<see cref="System.ObjectDisposedException"/>) or queued before the workers start to
/// leave, so the drain runs it. Without it, a spawner could pass its disposal check, be preempted,
/// and queue its job after the last worker had left: the job then ended canceled without running,
/// and a detached one vanished without a trace.
/// </summary>
/// <remarks>
/// <para>State: <see cref="_outsideSpawns"/> counts the spawns between steps 1 and 3 below.
/// It is only ever raised by a spawner that then lowers it, so it returns to 0 as soon as the
/// spawns under way have queued; a spawner holds no lock and waits for nothing in between.</para>
/// <para>Protocol, for a spawn made while the thread's current scheduler context is not one of the
/// runtime's workers (<see cref="NeedsSpawnFence"/>): a plain thread, another runtime's worker, and
/// also one of this runtime's own workers while it drives a single-threaded runtime (its context is
/// then that runtime). A spawn in a worker's own context goes to its local queue, which the worker
/// empties before it leaves, and needs no fence:</para>
/// <list type="number">
/// <item>The spawner raises the count (a full fence), then reads the disposed flag. Set: it lowers
/// the count and throws. (It reads the flag once before raising the count, too, and throws at once
/// if it is set: spawners that keep trying after the disposal started would otherwise keep the
/// count above 0 in turns, and the disposal, waiting to read 0, would wait with them.)</item>
/// <item>It builds and queues the job.</item>
/// <item>It lowers the count.</item>
/// </list>
/// <para>And for the disposal:</para>
/// <list type="number">
/// <item><see cref="JobRuntime.Dispose()"/> sets the disposed flag with a full fence (an interlocked
/// exchange).</item>
/// <item><see cref="WaitForSpawnsInFlight"/> waits until the count reads 0.</item>
/// <item>Only then are the workers told to drain and leave.</item>
/// </list>
/// <para>Both sides write, fence, then read what the other writes, so at least one sees the other:
/// either the spawner sees the flag and throws, or the disposal sees the count and waits for the
/// job to be queued, where the drain finds it. The single-threaded runtimes need no fence: their
/// disposal cancels whatever is still queued, a spawn accepted at the last moment included.</para>
/// </remarks>
public abstract partial class JobRuntime
{
    /// <summary>
    /// The count of spawns in flight, alone on its cache line: outside spawners write it twice per
    /// spawn, and every worker spawn reads the fields beside it (<see cref="_fencesOutsideSpawns"/>,
    /// the disposed flag); sharing a line would make each outside spawn cost the workers a miss.
    /// </summary>
    private PaddedCount _outsideSpawns;

    [StructLayout(LayoutKind.Explicit, Size = 128)]
    private struct PaddedCount
    {
        [FieldOffset(64)]
        public int Value;
    }

    /// <summary>Set by a runtime whose disposal drains (see the remarks above), before it starts.</summary>
    private protected bool _fencesOutsideSpawns;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool NeedsSpawnFence(PerThread thread) =>
        _fencesOutsideSpawns && !(thread.Context is Worker worker && worker.Runtime == this);

    /// <summary>Step 1 of the spawner's side.</summary>
    private void EnterSpawnFence()
    {
        if (IsDisposed)
        {
            ThrowHelper.ThrowObjectDisposed(GetType().Name); // before raising the count: see step 1
        }

        Interlocked.Increment(ref _outsideSpawns.Value);
        if (IsDisposed)
        {
            Interlocked.Decrement(ref _outsideSpawns.Value);
            ThrowHelper.ThrowObjectDisposed(GetType().Name);
        }
    }

    /// <summary>Step 3 of the spawner's side.</summary>
    private void ExitSpawnFence() => Interlocked.Decrement(ref _outsideSpawns.Value);

    /// <summary>
    /// Step 2 of the disposal's side: returns once every spawn that passed its disposal check has
    /// queued its job. A spawner between steps 1 and 3 only builds and queues an item, so this waits
    /// a few instructions, or one time slice when the spawner was preempted.
    /// </summary>
    private protected void WaitForSpawnsInFlight()
    {
        SpinWait spin = default;
        while (Volatile.Read(ref _outsideSpawns.Value) != 0)
        {
            spin.SpinOnce();
        }
    }
}
