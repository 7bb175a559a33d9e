using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Jobs;

/// <summary>
/// Keeps async recursion and continuation chains off the stack. Every place where Myriad would run
/// user code nested inside other user code (a builder's <c>Start</c>, a continuation dispatched by a
/// completing job) goes through here.
/// </summary>
/// <remarks>
/// <para><b>Why.</b> An async method that completes synchronously is an ordinary nested call, and a
/// completion runs its awaiter's continuation inline: a 10,000-deep recursion or a chain of a million
/// awaits becomes a million nested frames (the deep-recursion experiment of docs/experiments.md). The TPL's answer is <c>Task.Yield</c>, a
/// thread-pool round trip per level. Ours is a depth counter: inline while shallow, queued when deep.</para>
/// <para><b>Protocol.</b>
/// 1. <see cref="PerThread.Depth"/> counts the Myriad frames (Start or Dispatch) on this thread's stack.
/// 2. Below <see cref="MyriadDefaults.MaxInlineDepth"/> the work runs inline, with the counter raised.
/// 3. At the limit, the work is deferred: on a scheduler thread (a worker, or a thread driving a
///    current-thread runtime) to that scheduler's local queue; on any other thread to a thread-local
///    FIFO.
/// 4. On a non-scheduler thread the outermost Myriad frame (depth 0) drains the thread-local FIFO
///    before it returns, so nothing deferred is left behind when control goes back to user code.
///    A scheduler's own loop drains what was deferred to it. A synchronous wait before the
///    outermost frame returns runs the FIFO itself (<see cref="RunDeferredWhileWaiting"/>).
/// 5. On a current-thread runtime's driver, each item run from the queue may resume at most
///    <see cref="MyriadDefaults.InlineBudget"/> continuations inline; later ones go to the back of the
///    queue. The depth limit bounds nesting, not a run: a producer and a consumer handing items over
///    inline unwind after every hand-off, and would otherwise keep everything else queued waiting.
/// The counter only ever counts our own frames, so a depth above zero always has an outermost frame
/// of ours below it that will drain. The cost on the fast path is one thread-static read (<see cref="PerThread"/>) and a field write.</para>
/// </remarks>
internal static class Trampoline
{
    /// <summary>Step 2 check: may one more level run inline? If so the caller must call <see cref="Exit"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool TryEnter(out PerThread state, out int previousDepth)
    {
        state = PerThread.Current;
        return TryEnter(state, out previousDepth);
    }

    /// <summary><see cref="TryEnter(out PerThread, out int)"/> for a caller that already holds this thread's state.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool TryEnter(PerThread state, out int previousDepth)
    {
        int depth = state.Depth;
        previousDepth = depth;
        if (depth < MyriadDefaults.MaxInlineDepth)
        {
            state.Depth = depth + 1;
            return true;
        }

        return false;
    }

    /// <summary>Leaves a level entered with <see cref="TryEnter(out PerThread, out int)"/>; the outermost level drains (step 4).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Exit(PerThread state, int previousDepth)
    {
        state.Depth = previousDepth;
        if (previousDepth == 0 && state.Deferred is { Count: > 0 })
        {
            DrainDeferred(state);
        }
    }

    /// <summary>Runs a continuation (a <see cref="WorkItem"/> or an <see cref="Action"/>), inline or deferred.</summary>
    internal static void Dispatch(object continuation) => Dispatch(PerThread.Current, continuation);

    /// <summary><see cref="Dispatch(object)"/> for a caller that already holds this thread's state.</summary>
    internal static void Dispatch(PerThread state, object continuation)
    {
        // On a deterministic runtime's driving thread a wake-up is a queued step, so that the seed
        // picks whether the waker or the woken job goes on first (see SchedulerContext.QueuesResumes).
        // On a thread lent for one job's synchronous stretch (a guest), a woken job goes to the
        // workers: the thread was lent for that job only. What runs none of the runtime's code (a
        // blocked thread's wake-up, a task's completion) may still run there.
        // Elsewhere this costs two loads and a branch per dispatch.
        if (state.Context is { QueuesResumes: true } queuing && continuation is WorkItem resumed
            && !(queuing.IsLent && resumed.WakesOutside(queuing.Runtime)))
        {
            queuing.DeferLocal(resumed);
            return;
        }

        // A current-thread runtime's item spent its inline budget (see SchedulerContext.BoundsInlineRuns):
        // what it wakes from now on waits at the back of the queue, behind everything queued before.
        if (state.Context is { BoundsInlineRuns: true } bounded && continuation is WorkItem budgeted && --state.InlineBudget < 0)
        {
            bounded.DeferLocal(budgeted);
            return;
        }

        if (TryEnter(state, out int previous))
        {
            try
            {
                if (continuation is WorkItem item)
                {
                    item.Execute(state);
                }
                else
                {
                    RunForeign(state, (Action)continuation);
                }
            }
            finally
            {
                Exit(state, previous);
            }
        }
        else
        {
            Defer(state, continuation as WorkItem ?? new ActionWorkItem((Action)continuation));
        }
    }

    /// <summary>
    /// Tells an observer that completes other cells (<see cref="CellObserver.CompletesOtherCells"/>)
    /// inline below the depth limit, and defers it at the limit (steps 2 and 3), so that a chain of
    /// such observers unwinds instead of overflowing the stack.
    /// </summary>
    internal static void Notify(PerThread state, CellObserver observer, JobCell cell, short token)
    {
        if (TryEnter(state, out int previous))
        {
            try
            {
                observer.OnCellCompleted(cell, token);
            }
            finally
            {
                Exit(state, previous);
            }
        }
        else
        {
            Defer(state, new ObserverCall(observer, cell, token));
        }
    }

    /// <summary>A deferred <see cref="Notify"/>: the cell keeps its outcome until the observer consumes it.</summary>
    private sealed class ObserverCall(CellObserver observer, JobCell cell, short token) : WorkItem
    {
        internal override void Execute(PerThread state) => observer.OnCellCompleted(cell, token);

        // A completion handed on (a race decided), no job's code: a single-threaded runtime runs it
        // before its drive returns, not at a next drive that may never come.
        internal override bool WakesOutside(JobRuntime runtime) => true;
    }

    /// <summary>
    /// Runs a continuation that is not Myriad's own. Its exception must not unwind through the
    /// completion that runs it (see <see cref="ThrowHelper.ContinuationFailed"/>), which is also what
    /// lets the builders' <c>Start</c> do without a finally block.
    /// </summary>
    internal static void InvokeForeign(Action action)
    {
        try
        {
            action();
        }
        catch (Exception exception)
        {
            ThrowHelper.ContinuationFailed(exception);
        }
    }

    /// <summary>
    /// Runs a continuation of code that is not a job (an <c>async Task</c> method awaiting a job, say)
    /// with nothing to resume on: inline on a thread of no runtime, as a <c>Task</c> completion runs
    /// its continuations, but never on a runtime's thread, where it would stall every job queued
    /// behind it. There it goes to the .NET thread pool, as <c>Task</c> code without a context resumes.
    /// </summary>
    internal static void RunForeign(PerThread state, Action action)
    {
        if (state.Context is null)
        {
            InvokeForeign(action);
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(static a => InvokeForeign(a), action, preferLocal: false);
        }
    }

    /// <summary>Runs <paramref name="item"/> on the .NET thread pool, at the bottom of a pool thread's stack.</summary>
    internal static void RunOnThreadPool(WorkItem item) =>
        ThreadPool.UnsafeQueueUserWorkItem(static i => RunOnPoolThread(i), item, preferLocal: false);

    /// <summary>
    /// A pool thread has no scheduler to take what the trampoline defers (step 3), so that went to
    /// the thread's FIFO: drain it before the pool thread is given back (step 4), or a long chain
    /// resumed here would stop at the first deferral.
    /// </summary>
    private static void RunOnPoolThread(WorkItem item)
    {
        RunFromScheduler(item);
        PerThread state = PerThread.Current;
        if (state.Depth == 0 && state.Context is null && state.Deferred is { Count: > 0 })
        {
            DrainDeferred(state);
        }
    }

    /// <summary>Step 3: hands work that must not run deeper to the current scheduler or the thread FIFO.</summary>
    internal static void Defer(WorkItem item) => Defer(PerThread.Current, item);

    internal static void Defer(PerThread state, WorkItem item)
    {
        SchedulerContext? context = state.Context;
        if (context is not null)
        {
            context.DeferLocal(item);
        }
        else
        {
            (state.Deferred ??= new WorkQueue()).Enqueue(item);
        }
    }

    /// <summary>Runs a scheduler's item at the bottom of the stack (the scheduler loops call this).</summary>
    internal static void RunFromScheduler(WorkItem item) => RunFromScheduler(PerThread.Current, item);

    /// <summary><see cref="RunFromScheduler(WorkItem)"/> for a loop that holds its thread's state (a worker looks it up once, not per item).</summary>
    internal static void RunFromScheduler(PerThread state, WorkItem item) => RunFromScheduler(state, item, depth: 1);

    /// <summary>
    /// <see cref="RunFromScheduler(PerThread, WorkItem)"/> with the item's frame counted at
    /// <paramref name="depth"/>: <see cref="MyriadDefaults.MaxInlineDepth"/> makes everything the item
    /// dispatches deferred rather than run inline.
    /// </summary>
    internal static void RunFromScheduler(PerThread state, WorkItem item, int depth)
    {
        int previous = state.Depth;
        state.Depth = depth;
        ThreadContexts saved = ExecutionContextHelper.SaveBeforeItem(state);
        try
        {
            item.Execute(state);
            ExecutionContextHelper.RestoreAfterItem(state, saved);
        }
        finally
        {
            state.Depth = previous;
        }
    }

    /// <summary>
    /// Step 4 for a thread that blocks before its outermost frame returns (a synchronous wait deep in
    /// a call chain): runs this thread's deferred work from the waiting frame until
    /// <paramref name="waiter"/> is done or the queue is empty. Each item runs at the waiting
    /// frame's depth, so past the limit whatever it dispatches is deferred again and run by this
    /// loop, from the same stack position, instead of nesting deeper.
    /// </summary>
    internal static void RunDeferredWhileWaiting(PerThread state, BlockingWaiter waiter)
    {
        WorkQueue queue = state.Deferred!;
        int depth = Math.Max(state.Depth, 1);
        while (!waiter.IsDone && queue.TryDequeue(out WorkItem? item))
        {
            RunFromScheduler(state, item, depth);
        }
    }

    private static void DrainDeferred(PerThread state)
    {
        WorkQueue queue = state.Deferred!;
        while (queue.TryDequeue(out WorkItem? item))
        {
            state.Depth = 1;
            try
            {
                item.Execute(state);
            }
            finally
            {
                state.Depth = 0;
            }
        }
    }
}

/// <summary>Adapts a plain <see cref="Action"/> continuation that had to be deferred.</summary>
internal sealed class ActionWorkItem(Action action) : WorkItem
{
    internal override void Execute(PerThread state) => Trampoline.RunForeign(state, action);

    // Code that is not a job: on a runtime's thread it goes to the thread pool (RunForeign).
    internal override bool WakesOutside(Scheduling.JobRuntime runtime) => true;
}
