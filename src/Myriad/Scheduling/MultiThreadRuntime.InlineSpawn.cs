using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

public sealed partial class MultiThreadRuntime
{
    /// <summary>The backlog of a worker's run queue: <see cref="RuntimeOptions.SpawnInlineBacklog"/>, or the queue's capacity if lower (a full queue cannot grow further).</summary>
    private readonly int _runQueueSpawnBacklog;

    /// <summary>
    /// The backlog rule of <see cref="RuntimeOptions.SpawnInlineBacklog"/>: a spawn made by a job of
    /// this runtime starts at once when the queue it would join already holds the backlog.
    /// </summary>
    /// <remarks>
    /// <list type="bullet">
    /// <item>On a worker (its own thread, running this runtime's job): the queue is its run queue,
    /// full at the backlog or at its capacity, whichever is lower. A push to a full run queue would
    /// move half of it to the global queue, where every worker takes it under one lock.</item>
    /// <item>On a thread that runs a job of this runtime while it waits for it (a guest: the
    /// <c>Run</c> of a plain program's entry job): its spawns go to the global queue, so that is the
    /// queue whose length counts.</item>
    /// <item>Nowhere else: a plain thread that runs no job of this runtime, another runtime's worker,
    /// or a spare thread never runs the runtime's jobs inline; a task of a non-default
    /// <c>TaskScheduler</c> would leak that scheduler into the job; and under
    /// <see cref="ExecutionContext.SuppressFlow"/> a queued spawn runs in the default context.</item>
    /// </list>
    /// The lengths are read without synchronization: thieves and other spawners move them meanwhile,
    /// and a stale read only queues one spawn more or starts one more inline, both correct.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private protected override bool StartsSpawnInline(PerThread thread)
    {
        // Called only when SpawnInlineBacklog is above 0 (_mayStartSpawnsInline).
        switch (thread.Context)
        {
            case Worker worker when worker.Runtime == this:
                if (worker.RunQueueCount < _runQueueSpawnBacklog || !worker.IsCurrentThread || !MayRunHere())
                {
                    return false;
                }

                // A job run inside a spawn shows the worker busy, as a helped join does: a worker
                // that keeps starting spawns inline must not look blocked to the wake watchdog,
                // which would start a spare thread to compete with it for the cores.
                worker.CountHelpedJob();
                return true;
            case GuestContext guest when guest.Runtime == this:
                return _global.Count >= _options.SpawnInlineBacklog && MayRunHere();
            default:
                return false;
        }

        // Not inside a task of a non-default TaskScheduler (the job would see it as its own), and not
        // while the ExecutionContext's flow is suppressed: a queued spawn then captures no context
        // and its body runs in the default one, which an inline body would not.
        static bool MayRunHere() => !ExecutionContextHelper.InNonDefaultTaskScheduler && !ExecutionContext.IsFlowSuppressed();
    }
}
