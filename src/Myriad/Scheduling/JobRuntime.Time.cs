using System;
using Myriad.Coordination;
using Myriad.Internal;

namespace Myriad.Scheduling;

public abstract partial class JobRuntime
{
    private TimerQueue? _timers;

    /// <summary>
    /// The clock of this runtime's timers: <see cref="Job.Delay(TimeSpan, System.Threading.CancellationToken)"/>
    /// and select timeouts started on the runtime measure time with it. Set through
    /// <see cref="RuntimeOptions.TimeProvider"/> (default <see cref="TimeProvider.System"/>); a
    /// <see cref="DeterministicRuntime"/> has a virtual clock of its own.
    /// </summary>
    public virtual TimeProvider TimeProvider => TimeProvider.System;

    /// <summary>The timer queue of <see cref="TimeProvider"/> (one per clock, shared by the runtimes that use it).</summary>
    internal TimerQueue Timers => _timers ??= TimerQueue.For(TimeProvider);

    /// <summary>
    /// Queues several items at once from any thread (timers that fell due together). The default
    /// queues them one by one; a runtime with a shared queue overrides it to take its lock and wake
    /// its workers once per batch.
    /// </summary>
    internal virtual void ScheduleBatch(ReadOnlySpan<WorkItem> items)
    {
        foreach (WorkItem item in items)
        {
            Schedule(item);
        }
    }
}
