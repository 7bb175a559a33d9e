using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

internal sealed partial class Worker
{
    private uint _victimSeed;

    /// <summary>
    /// Looks for work outside this worker: other workers' queues (steal half), their next-job slots,
    /// and the global queue, for <see cref="RuntimeOptions.SearchRounds"/> rounds with a short spin
    /// between rounds. Bounded, so that an idle worker soon parks and its core idles.
    /// </summary>
    private WorkItem? Search()
    {
        Worker[] workers = _runtime.Workers;
        int rounds = _runtime.Options.SearchRounds;
        for (int round = 0; round <= rounds; round++)
        {
            // Rotate the starting victim so that thieves spread over victims instead of piling on one.
            _victimSeed = (_victimSeed * 1664525u) + 1013904223u;
            int start = (int)(_victimSeed % (uint)workers.Length);
            for (int i = 0; i < workers.Length; i++)
            {
                Worker victim = workers[(start + i) % workers.Length];
                if (victim == this)
                {
                    continue;
                }

                WorkItem? item = _queue.Owner.StealFrom(victim.Stealer);
                if (item is not null)
                {
                    StealCount++;
                    return item;
                }

                // The victim's slot is stolen only when its queue is empty: otherwise the owner is
                // about to run it and taking it would only move a hot item to a cold cache.
                if (Volatile.Read(ref victim._next) is not null && victim._queue.Count == 0)
                {
                    item = Interlocked.Exchange(ref victim._next, null);
                    if (item is not null)
                    {
                        return item;
                    }
                }
            }

            if ((TakeFrom(_runtime.WokenQueue) ?? TakeFromGlobal()) is { } global)
            {
                return global;
            }

            if (round < rounds)
            {
                Thread.SpinWait(_runtime.Options.SearchSpinIterations * (round + 1));
            }
        }

        return null;
    }

    /// <summary>
    /// A spare thread's theft (see <see cref="SpareWorker"/>): half of this worker's run queue, else
    /// its next-job slot whatever the queue holds, since this worker is presumed stuck in an item.
    /// </summary>
    internal WorkItem? StealInto(LocalQueueOwner thief) =>
        thief.StealFrom(Stealer) ?? (Volatile.Read(ref _next) is null ? null : Interlocked.Exchange(ref _next, null));
}
