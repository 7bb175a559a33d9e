using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Myriad.Internal;

/// <summary>
/// Cheap ExecutionContext checks for the suspend and resume paths.
/// </summary>
/// <remarks>
/// <para><b>Why.</b> <c>ExecutionContext.Capture()</c> and the BCL builders' <c>Start</c> each read
/// <c>Thread.CurrentThread</c>, a thread-static lookup that costs about as much as the rest of a
/// synchronous async call. A hop (suspend, resume, restore) used to make three of them and a
/// builder's Start one more on top of the trampoline's own. Myriad already holds the thread's
/// <see cref="PerThread"/>, which caches the <see cref="Thread"/> object, so it reads the context
/// fields of that object directly.</para>
/// <para><b>Direct access and its fallback.</b> The fields are the runtime's own
/// (<c>Thread._executionContext</c>, <c>Thread._synchronizationContext</c>), reached through
/// <see cref="UnsafeAccessorAttribute"/>. <see cref="Direct"/> is decided once by a probe on a fresh
/// thread: the fields must exist, have the expected types, read null for the default context and
/// non-null once an <see cref="AsyncLocal{T}"/> is set. If any of that fails (a future runtime that
/// renamed them), every method here falls back to the public API, which is correct, only slower.
/// Only reads of the execution context are direct; every change of it goes through the public
/// <see cref="ExecutionContext.Restore"/>, so AsyncLocal change notifications still fire.</para>
/// <para><b>Default context.</b> The runtime keeps null in the thread's field for the default
/// context; comparing with <see cref="Default"/> as well keeps the checks right if it ever stores
/// the instance instead.</para>
/// </remarks>
internal static class ExecutionContextHelper
{
    internal static readonly ExecutionContext Default = CaptureOnFreshThread();

    /// <summary>True when the thread's context fields can be read directly (see remarks).</summary>
    internal static readonly bool Direct = ProbeDirectAccess();

    /// <summary>The flowing context, or null when it is the default (nothing to restore on resume).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ExecutionContext? CaptureNonDefault()
    {
        ExecutionContext? context = ExecutionContext.Capture();
        return ReferenceEquals(context, Default) ? null : context;
    }

    /// <summary><see cref="CaptureNonDefault()"/> without a thread-static lookup when the context is the default.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ExecutionContext? CaptureNonDefault(PerThread state) =>
        // Non-default (or no direct access): the public API also honours SuppressFlow.
        Direct && IsDefaultStored(ThreadExecutionContext(state.Thread)) ? null : CaptureNonDefault();

    internal static bool CurrentIsDefault
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => ReferenceEquals(ExecutionContext.Capture(), Default);
    }

    /// <summary>Whether the thread runs in the default context.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool IsDefault(PerThread state) =>
        Direct ? IsDefaultStored(ThreadExecutionContext(state.Thread)) : CurrentIsDefault;

    /// <summary>
    /// Clears the thread's SynchronizationContext for a loop that runs unrelated work on a thread
    /// that waits (a worker's blocking wait, a drive of a single-threaded runtime), returning it for
    /// the restore: that work must not see, and capture in its Task awaits, the waiting frame's.
    /// </summary>
    internal static SynchronizationContext? HideSynchronizationContext()
    {
        SynchronizationContext? current = SynchronizationContext.Current;
        if (current is not null)
        {
            SynchronizationContext.SetSynchronizationContext(null);
        }

        return current;
    }

    /// <summary>
    /// Whether this thread runs a <see cref="System.Threading.Tasks.Task"/> of a scheduler other than
    /// the default one (a task of a runtime's <c>TaskScheduler</c>, an exclusive scheduler): jobs run
    /// here inline would see that scheduler as <c>TaskScheduler.Current</c>. Their Task awaits would
    /// capture it, and a <c>Task.Factory.StartNew</c> or <c>ContinueWith</c> in them would queue plain
    /// delegates to it (to a runtime's workers, where code that is not a job never runs).
    /// </summary>
    internal static bool InNonDefaultTaskScheduler => System.Threading.Tasks.TaskScheduler.Current != System.Threading.Tasks.TaskScheduler.Default;

    /// <summary>
    /// Runs one queued item of <paramref name="context"/> (<see cref="Scheduling.SchedulerContext.TryRunOne"/>)
    /// on a thread that runs a task of a non-default scheduler (<see cref="InNonDefaultTaskScheduler"/>):
    /// inside a task of the default scheduler, run synchronously, so that the item sees the
    /// default <c>TaskScheduler.Current</c>, as it would on a worker's own loop. A task per item, on a
    /// path taken only by a blocking wait inside such a task.
    /// </summary>
    /// <remarks>
    /// Two hazards of running a task synchronously. The task denies child attachment: a job that
    /// starts an <c>AttachedToParent</c> task would make it the child of this wrapper, which would
    /// then wait for that child before returning, a deadlock when the child waits for the job. And
    /// with too little stack left the TPL declines to run the task inline and queues it to the
    /// thread pool, where the item would be taken off this thread (a spawn claimed there is lost):
    /// then the item runs here, seeing the caller's scheduler, as before.
    /// </remarks>
    internal static bool TryRunOneOutsideTaskScheduler(Scheduling.SchedulerContext context)
    {
        return RuntimeHelpers.TryEnsureSufficientExecutionStack()
            ? RunInDefaultSchedulerTask(static c => ((Scheduling.SchedulerContext)c!).TryRunOne(), context)
            : context.TryRunOne();
    }

    /// <summary>
    /// <see cref="Jobs.JobCell.TryRunInline"/> of the job a blocking wait is for, on a thread that runs
    /// a task of a non-default scheduler: inside a task of the default one, as
    /// <see cref="TryRunOneOutsideTaskScheduler"/> runs a queued item, with the same two hazards. Run
    /// inline here as on any other thread, a waited-for spawn does not depend on the waiting
    /// thread's scheduler, and a seeded runtime draws the same schedule wherever it is driven from.
    /// </summary>
    internal static void TryRunInlineOutsideTaskScheduler(Jobs.JobCell cell)
    {
        // With too little stack it stays queued, as before: run inline here, it would see the caller's scheduler.
        if (RuntimeHelpers.TryEnsureSufficientExecutionStack())
        {
            RunInDefaultSchedulerTask(static c => ((Jobs.JobCell)c!).TryRunInline(PerThread.Current), cell);
        }
    }

    /// <summary>
    /// Runs <paramref name="body"/> inside a task of the default scheduler, synchronously on this
    /// thread (see the hazards in <see cref="TryRunOneOutsideTaskScheduler"/>; the caller has checked the stack).
    /// </summary>
    private static bool RunInDefaultSchedulerTask(Func<object?, bool> body, object state)
    {
        var task = new System.Threading.Tasks.Task<bool>(body, state, System.Threading.Tasks.TaskCreationOptions.DenyChildAttach);
        task.RunSynchronously(System.Threading.Tasks.TaskScheduler.Default);
        return task.GetAwaiter().GetResult();
    }

    /// <summary>
    /// <see cref="HideSynchronizationContext()"/> for a caller that holds the thread's state: the
    /// thread's field is read directly, so a thread without a context (every worker) pays one load.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static SynchronizationContext? HideSynchronizationContext(PerThread state)
    {
        if (!Direct)
        {
            return HideSynchronizationContext();
        }

        ref SynchronizationContext? sync = ref SyncContextOf(state.Thread);
        SynchronizationContext? current = sync;
        if (current is not null)
        {
            sync = null;
        }

        return current;
    }

    /// <summary>
    /// As <see cref="HideSynchronizationContext(PerThread)"/>, showing <paramref name="shown"/> instead of
    /// none (null: hides). Returns the thread's own context, for <see cref="RestoreSynchronizationContext"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static SynchronizationContext? ReplaceSynchronizationContext(PerThread state, SynchronizationContext? shown)
    {
        if (shown is null)
        {
            return HideSynchronizationContext(state);
        }

        SynchronizationContext? current = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(shown);
        return current;
    }

    /// <summary>Undoes <see cref="HideSynchronizationContext(PerThread)"/> on the same thread.</summary>
    internal static void RestoreSynchronizationContext(PerThread state, SynchronizationContext? context)
    {
        if (Direct)
        {
            SyncContextOf(state.Thread) = context;
        }
        else
        {
            SynchronizationContext.SetSynchronizationContext(context);
        }
    }

    /// <summary>A context as the thread stores it: null or the default instance both mean the default (see remarks).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool IsDefaultStored(ExecutionContext? stored) => stored is null || ReferenceEquals(stored, Default);

    /// <summary>After running a continuation inline in the default context, undo any AsyncLocal it set.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void RestoreDefaultIfChanged(PerThread state)
    {
        if (!IsDefault(state))
        {
            ExecutionContext.Restore(Default);
        }
    }

    /// <summary>
    /// The thread's SynchronizationContext (its field read directly when it can be), for
    /// <see cref="RestoreAfterInlineRun"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static SynchronizationContext? CurrentSynchronizationContext(PerThread state) =>
        Direct ? SyncContextOf(state.Thread) : SynchronizationContext.Current;

    /// <summary>
    /// After running a job's code inline in the default context on a thread that is not between a
    /// scheduler's items (a waiting thread running the spawn it waits for, a job helping the spawn
    /// it awaits): puts back the SynchronizationContext read before (<see cref="CurrentSynchronizationContext"/>)
    /// and undoes any AsyncLocal it set, as <see cref="ExecutionContext.Run"/> and
    /// <c>Task.RunSynchronously</c> do. Only a scheduler's loop resets a thread after each item
    /// (<see cref="RestoreAfterItem"/>); without this, a SynchronizationContext the code installed
    /// stayed on the caller's thread, and the caller's later Task awaits captured it.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void RestoreAfterInlineRun(PerThread state, SynchronizationContext? sync)
    {
        if (!ReferenceEquals(CurrentSynchronizationContext(state), sync))
        {
            RestoreSynchronizationContext(state, sync);
        }

        RestoreDefaultIfChanged(state);
    }

    /// <summary>
    /// Before a scheduler runs an item: the thread's ExecutionContext and SynchronizationContext, to
    /// be put back by <see cref="RestoreAfterItem"/>. On a worker's loop these are the default and
    /// none; in a loop nested in a frame that waits (a blocking wait on a worker, a drive of a
    /// single-threaded runtime) they are that frame's own, which must survive the items it runs.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ThreadContexts SaveBeforeItem(PerThread state) =>
        Direct
            ? new ThreadContexts(Peek(state.Thread), SyncContextOf(state.Thread))
            : new ThreadContexts(ExecutionContext.Capture(), SynchronizationContext.Current);

    /// <summary>
    /// After a scheduler ran an item: the contexts the thread had before it, as the .NET thread pool
    /// resets its threads between work items. Without it an item that set an AsyncLocal without
    /// flowing (a task run under <c>SuppressFlow</c>) or installed a SynchronizationContext would
    /// leak it into every later, unrelated item on that thread, and a leaked SynchronizationContext
    /// would capture their Task awaits.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void RestoreAfterItem(PerThread state, ThreadContexts saved)
    {
        if (Direct)
        {
            Thread thread = state.Thread;
            ref SynchronizationContext? sync = ref SyncContextOf(thread);
            if (!ReferenceEquals(sync, saved.Sync))
            {
                sync = saved.Sync;
            }

            if (!ReferenceEquals(Peek(thread), saved.Context))
            {
                ExecutionContext.Restore(saved.Context ?? Default);
            }
        }
        else
        {
            if (!ReferenceEquals(SynchronizationContext.Current, saved.Sync))
            {
                SynchronizationContext.SetSynchronizationContext(saved.Sync);
            }

            if (!ReferenceEquals(ExecutionContext.Capture(), saved.Context))
            {
                ExecutionContext.Restore(saved.Context ?? Default);
            }
        }
    }

    /// <summary>The thread's current context, as the runtime stores it (null: default). Requires <see cref="Direct"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ExecutionContext? Peek(Thread thread) => ThreadExecutionContext(thread);

    /// <summary>The thread's synchronization context field. Requires <see cref="Direct"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ref SynchronizationContext? SyncContextOf(Thread thread) => ref ThreadSynchronizationContext(thread);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_executionContext")]
    private static extern ref ExecutionContext? ThreadExecutionContext(Thread thread);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_synchronizationContext")]
    private static extern ref SynchronizationContext? ThreadSynchronizationContext(Thread thread);

    private static bool ProbeDirectAccess()
    {
        if (AppContext.TryGetSwitch("Myriad.DisableDirectContextAccess", out bool disabled) && disabled)
        {
            return false;
        }

        bool ok = false;
        var thread = new Thread(() =>
        {
            try
            {
                Thread self = Thread.CurrentThread;
                if (ThreadExecutionContext(self) is not null || ThreadSynchronizationContext(self) is not null)
                {
                    return;
                }

                var local = new AsyncLocal<int> { Value = 1 };
                ExecutionContext? set = ThreadExecutionContext(self);
                if (set is null || !ReferenceEquals(set, ExecutionContext.Capture()))
                {
                    return;
                }

                var context = new SynchronizationContext();
                SynchronizationContext.SetSynchronizationContext(context);
                ok = ReferenceEquals(ThreadSynchronizationContext(self), context);
                GC.KeepAlive(local);
            }
            catch (Exception)
            {
                // MissingFieldException for a renamed field, or anything else a runtime without
                // these fields (or without UnsafeAccessor) throws: fall back to the public API.
                ok = false;
            }
        });
        thread.UnsafeStart();
        thread.Join();
        return ok;
    }

    private static ExecutionContext CaptureOnFreshThread()
    {
        ExecutionContext? captured = null;
        var thread = new Thread(() => captured = ExecutionContext.Capture());
        thread.UnsafeStart();
        thread.Join();
        return captured!;
    }
}

/// <summary>A thread's ExecutionContext (as stored: null is the default) and SynchronizationContext.</summary>
internal readonly record struct ThreadContexts(ExecutionContext? Context, SynchronizationContext? Sync);
