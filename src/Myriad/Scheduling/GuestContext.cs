using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>
/// The context of a plain thread while it runs, inline, a job spawned on a multi-threaded runtime
/// that it is waiting for (Tokio's <c>block_on</c> idea: the waiter lends its thread). For that
/// synchronous stretch the job behaves as if on a worker: <see cref="JobRuntime.IsRuntimeThread"/>
/// is true, a Task it awaits resumes on the runtime, and work the trampoline defers goes to the
/// runtime's queue. Once the job suspends, its continuations run on the workers as usual.
/// </summary>
/// <remarks>
/// <para>The thread is lent for that one job, not to the runtime at large
/// (<see cref="SchedulerContext.IsLent"/>): another job that this job wakes (a promise it
/// completes, a channel item it hands over, a lock it releases) is queued to the workers instead of
/// resuming inline here, and so is a task of the runtime's <c>TaskScheduler</c> that the TPL would
/// inline. Run inline, their code would run on the caller's thread, maybe a request thread doing
/// sync-over-async, before the completing call even returned.</para>
/// <para>Stateless apart from its runtime, so one instance serves every guest thread. A nested
/// blocking wait inside such a job runs a spawned job that no worker has started yet, as the outer
/// wait did (it extends the same synchronous stretch); otherwise it runs no other runtime work (the
/// guest thread is not a worker) and sleeps through <see cref="BlockingWaiter"/>'s monitor path.</para>
/// </remarks>
internal sealed class GuestContext(MultiThreadRuntime runtime) : SchedulerContext(runtime, lent: true)
{
    internal override JobRuntime Runtime => runtime;

    // A resume, with its wake paid at once: this thread never runs what it queues here, and it may
    // return from its wait right after (it pays a deferred wake only when it blocks), so a wake
    // left to the lazy-wake timer would hold the woken job for up to that delay.
    internal override void DeferLocal(WorkItem item) => runtime.ScheduleResume(item, PerThread.Current);

    internal override bool TryRunOne() => false;

    internal override void IdleUntilWoken(BlockingWaiter waiter)
    {
    }

    internal override void Wake()
    {
    }

    /// <summary>A guest thread is not a worker: a blocking wait there simply sleeps.</summary>
    internal override bool CanHelpWhileWaiting => false;
}
