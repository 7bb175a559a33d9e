using System;
using Myriad.Internal;

namespace Myriad.Scheduling;

/// <summary>
/// What a thread that runs a Myriad scheduler offers to the job machinery: a place for deferred
/// work, and a way to keep working (or sleep) while a job blocks on another.
/// </summary>
/// <remarks>
/// A worker of the multi-threaded runtime, and a thread inside <c>Run</c> of a single-threaded
/// runtime, set <see cref="Current"/> for as long as they run the scheduler. The value is per thread
/// and is never shared: every method here is called on the owning thread only, except
/// <see cref="Wake"/>, which any thread may call.
/// </remarks>
internal abstract class SchedulerContext(JobRuntime runtime, bool lent = false)
{
    /// <summary>
    /// The id of <see cref="Runtime"/> (<see cref="RuntimeRegistry"/>), kept here so that the check
    /// "does this thread belong to the job's runtime?" that every resumption makes is two loads.
    /// </summary>
    internal readonly short RuntimeId = runtime.Id;

    /// <summary>
    /// A deterministic runtime's driver: a completion made on this thread queues the job it wakes
    /// instead of running it inline, so that the seed decides whether the waker or the woken job goes
    /// on first (inline, the woken job would always run before the waker's next statement, an order
    /// no other runtime guarantees, and bugs that need the other order could never be found). Also
    /// set on a lent thread (<see cref="IsLent"/>), which must not run the jobs it wakes.
    /// </summary>
    internal readonly bool QueuesResumes = lent || runtime is DeterministicRuntime;

    /// <summary>
    /// A plain thread lent to the runtime for one job's synchronous stretch (<see cref="GuestContext"/>):
    /// it runs that job, and nothing else of the runtime. Every job it wakes, and every task of the
    /// runtime's <c>TaskScheduler</c> that it would run inline, goes to the workers instead
    /// (<see cref="QueuesResumes"/> is set too); only items that run none of the runtime's code
    /// (<see cref="Internal.WorkItem.WakesOutside"/>) still run here.
    /// </summary>
    internal readonly bool IsLent = lent;

    /// <summary>
    /// A <see cref="CurrentThreadRuntime"/>'s driver: each item run from the queue may resume at most
    /// <see cref="Internal.MyriadDefaults.InlineBudget"/> continuations inline; the rest it wakes go to
    /// the back of the queue (see <see cref="Jobs.Trampoline"/>). Its one thread is the only one that
    /// runs jobs, so an endless run of inline hand-offs starves everything else queued. A worker of a
    /// <see cref="MultiThreadRuntime"/> has siblings that steal, and a deterministic runtime queues
    /// every resumption anyway (<see cref="QueuesResumes"/>).
    /// </summary>
    internal readonly bool BoundsInlineRuns = !lent && runtime is CurrentThreadRuntime;

    /// <summary>The <see cref="RuntimeId"/> of the calling thread's state: its runtime's, or <see cref="RuntimeRegistry.Foreign"/> on a thread of none.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    internal static short RuntimeIdOf(PerThread state) => state.Context is { } context ? context.RuntimeId : RuntimeRegistry.Foreign;

    /// <summary>The scheduler context of the calling thread, or null on a plain thread.</summary>
    internal static SchedulerContext? Current => PerThread.CurrentOrNull?.Context;

    internal abstract JobRuntime Runtime { get; }

    /// <summary>Queues work deferred by the trampoline on this thread (owner thread only).</summary>
    internal abstract void DeferLocal(WorkItem item);

    /// <summary>Runs one queued item if there is one (owner thread only).</summary>
    internal abstract bool TryRunOne();

    /// <summary>Sleeps until <see cref="Wake"/> or new work (owner thread only); returns at once if woken meanwhile.</summary>
    internal abstract void IdleUntilWoken(Jobs.BlockingWaiter waiter);

    /// <summary>Wakes the owner from <see cref="IdleUntilWoken"/> (any thread).</summary>
    internal abstract void Wake();

    /// <summary>Whether a blocking wait on this thread should run this scheduler's work meanwhile.</summary>
    internal virtual bool CanHelpWhileWaiting => true;

    /// <summary>
    /// Called on the owner thread before it blocks without running work (a blocking wait with too
    /// little stack left; see <c>BlockingWaiter</c>): hands whatever only this thread can see to the
    /// others, or wakes them for what they can, since nothing else would run it until the wait
    /// ends, and the wait may be for it.
    /// </summary>
    internal virtual void ExposeQueuedWork()
    {
    }

    /// <summary>
    /// Whether the owner thread may block without running work (a blocking wait with too little
    /// stack left): only where some other thread can run this scheduler's work meanwhile, a worker
    /// or spare of a multi-threaded runtime while a spare thread can still start. False for a
    /// single-threaded runtime's driver, which is the only such thread.
    /// </summary>
    internal bool MayBlockWithoutHelping => Runtime is MultiThreadRuntime multi && multi.MayBlockWithoutHelping;

    /// <summary>Installs <paramref name="context"/> as the thread's context and returns the previous one.</summary>
    internal static SchedulerContext? Enter(SchedulerContext context)
    {
        PerThread state = PerThread.Current;
        SchedulerContext? previous = state.Context;
        state.Context = context;
        return previous;
    }

    internal static void Leave(SchedulerContext? previous) => PerThread.Current.Context = previous;

    /// <summary><see cref="Leave(SchedulerContext?)"/> for a caller that already holds the thread's state.</summary>
    internal static void Leave(PerThread state, SchedulerContext? previous) => state.Context = previous;
}
