namespace Myriad.Internal;

/// <summary>
/// Anything a Myriad scheduler can run: a job's state-machine box, a spawned job, a task from the
/// <see cref="System.Threading.Tasks.TaskScheduler"/> bridge, a timer callback.
/// </summary>
/// <remarks>
/// <para>An abstract class rather than an interface: the scheduler's hot loop makes one virtual call per
/// item, which is cheaper than interface dispatch, and the boxes that derive from it need no extra
/// allocation to be queued.</para>
/// <para>Public only because <see cref="Channels.Chan{T}"/> derives from it (through
/// <see cref="Jobs.JobBox{T}"/>); it has no public members and cannot be derived from outside Myriad.</para>
/// </remarks>
[System.ComponentModel.EditorBrowsable(System.ComponentModel.EditorBrowsableState.Never)]
public abstract class WorkItem
{
    private protected WorkItem()
    {
    }

    /// <summary>Runs the item on the thread whose state is <paramref name="state"/>. Implementations must not throw; a job's failures go to its awaiter.</summary>
    internal abstract void Execute(PerThread state);

    /// <summary>
    /// Called instead of <see cref="Execute"/> when the runtime this item was queued to has finished
    /// its disposal and will never run it. The default runs the item on the .NET thread pool, which
    /// suits Myriad's own items (they run no job code: a waiter's wake-up, a completion hand-off) and
    /// <c>Task</c> code; a job overrides it to end canceled instead, since a job never runs off its runtime.
    /// </summary>
    internal virtual void Abandon() => Scheduling.JobRuntime.ScheduleAfterDisposal(this);

    /// <summary>
    /// Whether this item, queued on <paramref name="runtime"/>, only wakes someone outside it and runs
    /// none of its code: a blocked thread's wake-up, a job of another runtime sent home, a spawn's
    /// or a task's completion handed on to its awaiters. A single-threaded runtime runs such items
    /// before a drive returns (see <see cref="Scheduling.SingleThreadRuntime"/>), since nobody else
    /// would until its next drive. The default, false, leaves an item for the next drive: a job, a
    /// spawn, a timer, a task of the runtime's scheduler, anything not known to be harmless.
    /// </summary>
    internal virtual bool WakesOutside(Scheduling.JobRuntime runtime) => false;
}
