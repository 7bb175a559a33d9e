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
}
