namespace Myriad.Internal;

/// <summary>
/// Anything a Myriad scheduler can run: a job's state-machine box, a spawned job, a task from the
/// <see cref="System.Threading.Tasks.TaskScheduler"/> bridge, a timer callback.
/// </summary>
/// <remarks>
/// An abstract class rather than an interface: the scheduler's hot loop makes one virtual call per
/// item, which is cheaper than interface dispatch, and the boxes that derive from it need no extra
/// allocation to be queued.
/// </remarks>
internal abstract class WorkItem
{
    /// <summary>Runs the item on the thread whose state is <paramref name="state"/>. Implementations must not throw; a job's failures go to its awaiter.</summary>
    internal abstract void Execute(PerThread state);
}
