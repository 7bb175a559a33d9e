using System;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

public sealed partial class MultiThreadRuntime
{
    /// <inheritdoc/>
    public override TimeProvider TimeProvider => _options.TimeProvider;

    /// <summary>
    /// Timers that fell due together: one acquisition of the woken queue's lock for the whole
    /// batch, then one notify. The woken queue comes before every other queue on each worker tick
    /// (Go puts a goroutine woken by its timer in <c>runnext</c> for the same reason): in the global
    /// queue, behind a million spawned jobs not yet started, a timer that fired on time would resume
    /// its job a second late. Timers cannot starve the rest: each fires once per arming. The firing thread never runs the work itself, so the wake is paid at
    /// once rather than deferred (see the lazy-wake protocol): a deferred wake would only add the
    /// lazy-wake delay to every timer. The woken worker takes a batch from the woken queue and,
    /// finding more, wakes the next (see <see cref="IdleCoordinator"/>), so the items spread over
    /// the workers without the firing thread waking each one.
    /// </summary>
    internal override void ScheduleBatch(ReadOnlySpan<WorkItem> items)
    {
        if (_shutdown && IsDisposedAndDrained)
        {
            foreach (WorkItem item in items)
            {
                item.Abandon(); // as Schedule does after the disposal finished
            }

            return;
        }

        _woken.EnqueueBatch(items);

        // The same store -> load fence and shutdown re-check as a single outside schedule (see
        // ScheduleFromOutside and Schedule): the notify's reads and the drained check must not be
        // satisfied before the items are visible.
        Interlocked.MemoryBarrier();
        _idle.NotifyWork();
        if (_shutdown && IsDisposedAndDrained)
        {
            AbandonLeftovers();
        }
    }
}
