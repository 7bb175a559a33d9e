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
/// Stateless apart from its runtime, so one instance serves every guest thread; a nested blocking
/// wait inside such a job does not run other runtime work (the guest thread is not a worker), it
/// sleeps through <see cref="BlockingWaiter"/>'s monitor path.
/// </remarks>
internal sealed class GuestContext(MultiThreadRuntime runtime) : SchedulerContext(runtime)
{
    internal override JobRuntime Runtime => runtime;

    internal override void DeferLocal(WorkItem item) => runtime.Schedule(item);

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
