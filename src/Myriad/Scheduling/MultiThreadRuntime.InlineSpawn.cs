using System;
using System.Runtime.CompilerServices;
using Myriad.Internal;

namespace Myriad.Scheduling;

public sealed partial class MultiThreadRuntime
{
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
    /// or a spare thread never runs the runtime's jobs inline, and a task of a non-default
    /// <c>TaskScheduler</c> would leak that scheduler into the job.</item>
    /// </list>
    /// The lengths are read without synchronization: thieves and other spawners move them meanwhile,
    /// and a stale read only queues one spawn more or starts one more inline, both correct.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private protected override bool StartsSpawnInline(PerThread thread)
    {
        int backlog = _options.SpawnInlineBacklog;
        if (backlog == 0)
        {
            return false;
        }

        switch (thread.Context)
        {
            case Worker worker when worker.Runtime == this:
                if (worker.RunQueueCount < Math.Min(backlog, _options.LocalQueueCapacity) || !worker.IsCurrentThread)
                {
                    return false;
                }

                break;
            case GuestContext guest when guest.Runtime == this:
                if (_global.Count < backlog)
                {
                    return false;
                }

                break;
            default:
                return false;
        }

        return !ExecutionContextHelper.InNonDefaultTaskScheduler;
    }
}
