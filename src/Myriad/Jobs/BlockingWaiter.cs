using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Jobs;

/// <summary>
/// Waits synchronously for a job (<c>job.Wait()</c>, <c>GetAwaiter().GetResult()</c> on a pending job,
/// <c>runtime.Run</c>).
/// </summary>
/// <remarks>
/// Three strategies, cheapest first:
/// 1. A spawned job that no worker has started yet is claimed and run on the waiting thread: a
///    plain thread that spawns and waits pays no cross-thread hand-off at all (the tiny-tasks experiment of docs/experiments.md).
/// 2. On a scheduler thread (a worker, or a thread driving a current-thread runtime) the waiter
///    keeps running that scheduler's work until the job completes, so blocking a worker cannot
///    deadlock a runtime that needs that very worker to finish the job. When there is nothing to
///    run it parks the scheduler thread, and the job's completion unparks it.
/// 3. Anywhere else: spin briefly (a hop to another core often completes within the spin), then
///    sleep on a monitor until the completion pulses it.
/// The waiter registers itself as the job's one continuation, so waiting counts as awaiting:
/// waiting twice, or awaiting and waiting, throws like awaiting twice.
/// <para><b>Stack depth.</b> Strategies 1 and 2 run work on top of the waiting frame, and that work
/// may block in turn: 20,000 jobs each blocked in <c>Wait()</c> on a promise nested 20,000 frames
/// deep on one worker and ended the process with a stack overflow. A wait nested in work that an
/// outer wait runs (<see cref="PerThread.HelpingWaits"/>) helps only while enough stack is left
/// (<see cref="RuntimeHelpers.TryEnsureSufficientExecutionStack"/>, the check the TPL makes before it
/// runs a task inline, which keeps about 128 KiB in reserve). Past that: on a worker of a
/// multi-threaded runtime it blocks as strategy 3 does (a spare thread first hands back the items it
/// stole, which nobody else could see; a worker with queued work first notifies, so that a parked
/// sibling steals it at once), and the other workers, or a spare thread once every worker
/// is stuck, run what is queued. Where nobody else could run that work (the thread that drives a
/// single-threaded runtime, or a multi-threaded runtime whose spare threads are all in use or
/// disabled; see <see cref="SchedulerContext.MayBlockWithoutHelping"/>), the wait throws
/// <see cref="InsufficientExecutionStackException"/> into the job instead of blocking for good. The
/// outermost wait of a thread always helps, and on a worker or spare started with a known
/// <see cref="RuntimeOptions.ThreadStackSize"/> the reserve is at most half the stack (see
/// <see cref="HasStackToHelp"/>). A job of another multi-threaded runtime is waited for by blocking
/// (its own workers complete it). On a plain thread, the work run nested is what the trampoline
/// deferred to the thread's own queue (strategy 3), which nobody else runs: past the reserve that
/// wait throws too.</para>
/// </remarks>
internal sealed class BlockingWaiter : WorkItem
{
    private volatile bool _done;
    private SchedulerContext? _context;

    /// <summary>
    /// A thread-pool thread's sleep (strategy 3): completed under the waiter's lock by
    /// <see cref="Execute"/>. Null otherwise.
    /// </summary>
    private TaskCompletionSource? _poolSleep;

    internal static void Wait(JobCell cell, short token)
    {
        PerThread state = PerThread.Current;
        SchedulerContext? context = state.Context;
        if (context is { CanHelpWhileWaiting: false })
        {
            context = null;
        }

        // See "Stack depth" above. Checked before anything is registered, so a throw leaves the job
        // as it was.
        bool mayHelp = state.HelpingWaits == 0 || HasStackToHelp(state);
        if (!mayHelp)
        {
            // Blocking is safe when another runtime's workers complete the job; otherwise only
            // where some other thread runs this thread's work meanwhile. A single-threaded runtime's
            // job needs a driver, which this thread cannot be any more.
            JobRuntime? cellRuntime = cell.OwnerRuntime;
            bool completedElsewhere = cellRuntime is MultiThreadRuntime && cellRuntime != context?.Runtime;
            if (!completedElsewhere
                && (context is { MayBlockWithoutHelping: false } || (cellRuntime is SingleThreadRuntime other && context?.Runtime != other)
                    || (context is null && state.Deferred is { Count: > 0 })))
            {
                ThrowHelper.ThrowWaitNestedTooDeep();
            }

            // A spare thread's stolen items are invisible to the others (a worker's run queue and
            // next-job slot are not): left there, the job waited for could be among them.
            context?.ExposeQueuedWork();
            context = null;
        }

        BlockingWaiter waiter = state.CachedWaiter ?? new BlockingWaiter();
        state.CachedWaiter = null; // a nested wait (from work run by strategy 2) takes a fresh waiter
        waiter._done = false;

        if (cell.HasAwaiter)
        {
            // Awaited already: waiting too is the second consumption. Refused before strategy 1
            // runs the job, which would let this wait take the result the awaiter is owed.
            state.CachedWaiter = waiter;
            cell.ThrowRegistrationRefused(token);
        }

        JobRuntime? owner = cell.OwnerRuntime;
        if (owner is SingleThreadRuntime single && state.Context?.Runtime != single)
        {
            // Nobody else may be running a single-threaded runtime's jobs: the waiting thread drives
            // it (a worker of another runtime too, which is out of that runtime's service meanwhile,
            // as when it blocks on anything else). If another thread drives, this one keeps trying:
            // that driver runs this job while it drives, but it may stop first (its own job done,
            // its queue empty), and then this thread takes over. Nothing is registered on the cell
            // until this thread drives, so the other driver completing it is seen by polling.
            // Meanwhile a worker helps its own runtime; a plain thread sleeps.
            waiter._context = null;
            SynchronizationContext? frameSync = ExecutionContextHelper.HideSynchronizationContext();
            state.HelpingWaits++;
            try
            {
                while (!single.TryDriveUntilComplete(cell, token, waiter) && !cell.IsCompleted(token))
                {
                    if (context is null || !context.TryRunOne())
                    {
                        Thread.Sleep(MyriadDefaults.HelpLoopParkMilliseconds);
                    }
                }
            }
            finally
            {
                state.HelpingWaits--;
                SynchronizationContext.SetSynchronizationContext(frameSync);
            }

            // The drive bound the waiter to the runtime's driver: a cached waiter that kept it
            // would keep the whole runtime reachable from this thread after its disposal.
            waiter._context = null;
            state.CachedWaiter = waiter;
            return;
        }

        if (mayHelp && MayRunInline(owner, state) && TryRunInline(cell, state))
        {
            state.CachedWaiter = waiter;
            return;
        }

        waiter._context = context;
        cell.OnCompleted(waiter, token);

        if (context is not null)
        {
            // This thread will not run the job (another runtime's): pay at once the wake owed for
            // spawning it (see MultiThreadRuntime.ScheduleFromOutside) instead of leaving it to
            // the watchdog's delay.
            MultiThreadRuntime.PayOwedWake(state);

            // The items run meanwhile are unrelated jobs: they must not see (and capture in their
            // Task awaits) a SynchronizationContext the waiting frame installed.
            // Nor the TaskScheduler of a task this wait runs in (a task of the runtime's scheduler
            // that calls Wait()): the items then run inside a task of the default scheduler.
            SynchronizationContext? frameSync = ExecutionContextHelper.HideSynchronizationContext();
            bool hideScheduler = ExecutionContextHelper.InNonDefaultTaskScheduler;
            state.HelpingWaits++;
            try
            {
                while (!waiter._done)
                {
                    if (!(hideScheduler ? ExecutionContextHelper.TryRunOneOutsideTaskScheduler(context) : context.TryRunOne()))
                    {
                        context.IdleUntilWoken(waiter);
                    }
                }
            }
            finally
            {
                state.HelpingWaits--;
                SynchronizationContext.SetSynchronizationContext(frameSync);
            }
        }
        else
        {
            // Deep in a synchronous call chain (a job body that waits for a job it just called), the
            // trampoline deferred work to this thread's own queue, to run when the outermost frame
            // returns: the awaited job's body or resume may be there. Nobody else runs that queue,
            // so a wait that only slept would wait forever.
            // Past the reserve this wait runs nothing (mayHelp): it is for another runtime's job,
            // which needs none of this queue (the refusal above threw for any other).
            if (mayHelp && state.Deferred is { Count: > 0 })
            {
                state.HelpingWaits++;
                try
                {
                    Trampoline.RunDeferredWhileWaiting(state, waiter);
                }
                finally
                {
                    state.HelpingWaits--;
                }
            }

            var spinner = default(SpinWait);
            for (int i = 0; i < MyriadDefaults.BlockingSpinCount && !waiter._done; i++)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
            }

            if (!waiter._done)
            {
                MultiThreadRuntime.PayOwedWake(state);
                if (Thread.CurrentThread.IsThreadPoolThread)
                {
                    SleepOnPoolThread(waiter);
                }
                else
                {
                    lock (waiter)
                    {
                        while (!waiter._done)
                        {
                            Monitor.Wait(waiter);
                        }
                    }
                }
            }
        }

        waiter._context = null;
        state.CachedWaiter = waiter;
    }

    /// <summary>Stack a runtime's thread uses above the address <see cref="PerThread.RecordOwnStack"/> takes (start frames, guard page), counted as used.</summary>
    private const int StartFramesAllowance = 16 * 1024;

    /// <summary>
    /// Whether a wait nested in another's helping may run more work on top of itself: on a thread a
    /// runtime started with a known stack size, while <see cref="MyriadDefaults.NestedWaitStackReserve"/>
    /// (at most half the stack) is left; elsewhere, what <see cref="RuntimeHelpers.TryEnsureSufficientExecutionStack"/>
    /// says. That check keeps about 128 KiB, the whole of the smallest stack a worker may have, so
    /// on such a worker every nested wait stopped helping and started spare threads or threw.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static unsafe bool HasStackToHelp(PerThread state)
    {
        if (state.OwnStackSize == 0)
        {
            return RuntimeHelpers.TryEnsureSufficientExecutionStack();
        }

        // The base was taken inside the thread's loop, below the thread's start frames and the
        // guard page (about 5 KiB on a 128 KiB worker, measured with pthread_getattr_np): counted as
        // used, with room to spare.
        byte marker = 0;
        long used = state.OwnStackBase - (nint)(&marker) + StartFramesAllowance;
        return state.OwnStackSize - used >= Math.Min(MyriadDefaults.NestedWaitStackReserve, state.OwnStackSize / 2);
    }

    /// <summary>Strategy 1, counted as a helping wait: the job's body runs on top of this frame and may wait in turn.</summary>
    private static bool TryRunInline(JobCell cell, PerThread state)
    {
        state.HelpingWaits++;
        try
        {
            return cell.TryRunInline(state) && cell.IsCompletedUnchecked;
        }
        finally
        {
            state.HelpingWaits--;
        }
    }

    /// <summary>
    /// Whether strategy 1 may run the job on this thread. Not on a thread of another runtime: the job
    /// would run (and its Task awaits resume) there. Not on a plain thread that has a
    /// SynchronizationContext or runs a task of a non-default TaskScheduler (a UI thread, an
    /// exclusive scheduler): the job's Task awaits would capture it and post their resumes to a
    /// thread blocked right here, which is a deadlock. The workers run it then, as
    /// <c>Task.Run(...).Wait()</c> never inlines onto such a thread either.
    /// </summary>
    private static bool MayRunInline(JobRuntime? owner, PerThread state)
    {
        SchedulerContext? context = state.Context;
        if (context is not null)
        {
            return context.Runtime == owner && !ExecutionContextHelper.InNonDefaultTaskScheduler;
        }

        return SynchronizationContext.Current is null && TaskScheduler.Current == TaskScheduler.Default;
    }

    /// <summary>
    /// Strategy 3 on a thread-pool thread (sync-over-async: a request thread calling
    /// <c>runtime.Run</c>): sleeps in <see cref="Task.Wait()"/> on a task that the completion
    /// finishes, not on the monitor. The TPL tells the thread pool that a pool thread blocks in
    /// <c>Task.Wait</c>, and the pool then adds threads sooner; a monitor wait looks like work in
    /// progress. With a hundred pool threads blocked on jobs whose awaits need pool threads (a
    /// <c>Task.Delay</c>'s timer callback), a monitor wait starved the pool 4-5 times as long as
    /// <c>Task.Wait</c> on the same work. Costs one task per such sleep.
    /// 1. Under the waiter's lock: if not done, attach a new task source.
    /// 2. Outside the lock, wait for its task; then detach it (the waiter is cached for reuse).
    /// <see cref="Execute"/> sets the done flag, then, under the same lock, completes whatever is
    /// attached: either step 1 sees the flag, or the completion sees the source.
    /// </summary>
    private static void SleepOnPoolThread(BlockingWaiter waiter)
    {
        TaskCompletionSource? sleep = null;
        lock (waiter)
        {
            if (!waiter._done)
            {
                sleep = new TaskCompletionSource();
                waiter._poolSleep = sleep;
            }
        }

        if (sleep is not null)
        {
            sleep.Task.Wait();
            lock (waiter)
            {
                waiter._poolSleep = null;
            }
        }
    }

    internal bool IsDone => _done;

    /// <summary>Makes completion wake <paramref name="context"/>'s thread rather than a monitor sleeper.</summary>
    internal void BindContext(SchedulerContext context) => _context = context;

    internal override bool WakesOutside(JobRuntime runtime) => true; // it only signals the waiting thread

    internal override void Execute(PerThread state)
    {
        SchedulerContext? context = _context;
        _done = true;
        if (context is not null)
        {
            context.Wake();
        }
        else
        {
            lock (this)
            {
                Monitor.PulseAll(this);
                _poolSleep?.TrySetResult(); // the Task.Wait continuation it runs only signals the sleeper
            }
        }
    }
}
