using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Jobs;
using Myriad.Scheduling;

namespace Myriad.Interop;

/// <summary>
/// Runs <see cref="Task"/>s on a <see cref="JobRuntime"/>'s threads. Tasks started on it, and the
/// continuations of the <c>await</c>s inside them (of Tasks, and of jobs, whose awaiter captures the
/// current scheduler as a Task's does), are queued as work items of the runtime. After the runtime's
/// disposal a queued task is abandoned like any work item: a task cannot be canceled by its
/// scheduler, so it runs on the .NET thread pool.
/// </summary>
/// <remarks>
/// The TPL asks a scheduler whether a continuation may run inline on the completing thread. This one
/// says yes only on its own runtime's threads and only while the trampoline's depth allows, so a
/// chain of a million <c>Task</c>s each awaiting the previous one, completed at once, unwinds through
/// the queue instead of a million nested frames. A single-threaded runtime also says no to a
/// continuation offered only because its driving thread is a thread-pool thread (see
/// <see cref="TryExecuteTaskInline"/>), so that its order of work is the same on every thread.
/// </remarks>
internal sealed class MyriadTaskScheduler(JobRuntime runtime) : TaskScheduler
{
    public override int MaximumConcurrencyLevel => runtime.WorkerCount;

    /// <summary>The TPL queues a task or a continuation from any thread: a resume, never a spawn that the caller will wait for itself.</summary>
    protected override void QueueTask(Task task) => runtime.ScheduleResume(new TaskWorkItem(this, task), PerThread.Current);

    protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued)
    {
        SchedulerContext? context = SchedulerContext.Current;
        if (context is { IsLent: true } && context.Runtime == runtime)
        {
            // A plain thread lent for one job's synchronous stretch runs that job only: the task
            // stays queued (or is queued now) for the workers.
            return false;
        }

        if (context?.Runtime != runtime)
        {
            // A thread outside a single-threaded runtime blocks on one of its tasks: nothing runs it
            // while nobody drives the runtime, so this thread drives it until the task ran (here or
            // on another driver).
            // Not a disposed one: nothing is queued there any more (its tasks went to the thread
            // pool), so the plain wait of the TPL is the right one.
            if (runtime is not SingleThreadRuntime single || !taskWasPreviouslyQueued || runtime.IsDisposed)
            {
                return false;
            }

            single.DriveUntilCompleted(task);
            return true;
        }

        if (!taskWasPreviouslyQueued && runtime is SingleThreadRuntime && task.AsyncState is System.Action { Target: Task or ForeignAwait } && TaskScheduler.Current != this)
        {
            // An await's continuation in a task of this scheduler: the TPL wraps the continuation
            // delegate in a task whose state it is, and that delegate is an async method's resume
            // (its target the method's box, a Task) or a job's (a ForeignAwait); a user task whose
            // state is some other Action is not one. The TPL offers it inline inside a task of this
            // scheduler, and also on any thread-pool thread. Taken there, the order of a
            // single-threaded runtime's work (a seed's schedule) would depend on whether a pool
            // thread drives it; queued, the runtime orders it as it orders everything else. Other
            // inline offers stay accepted: RunSynchronously (which would block the driving thread
            // with the task queued behind it) and ExecuteSynchronously continuations, which the
            // TPL offers on every thread alike.
            return false;
        }

        if (!Trampoline.TryEnter(out PerThread state, out int previous))
        {
            return false;
        }

        try
        {
            return TryExecuteTask(task);
        }
        finally
        {
            Trampoline.Exit(state, previous);
        }
    }

    /// <summary>For debuggers only; queued tasks are not tracked separately from other work.</summary>
    protected override IEnumerable<Task>? GetScheduledTasks() => Enumerable.Empty<Task>();

    private sealed class TaskWorkItem(MyriadTaskScheduler scheduler, Task task) : WorkItem
    {
        internal override void Execute(PerThread state) => scheduler.TryExecuteTask(task);
    }
}
