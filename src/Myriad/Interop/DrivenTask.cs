using System;
using System.Collections.Generic;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Jobs;
using Myriad.Scheduling;

namespace Myriad.Interop;

/// <summary>
/// <see cref="Job{T}.AsTask"/> for a pending job of a single-threaded runtime. Nothing runs such a
/// job while nobody drives its runtime, so a plain <c>Task</c> over it would leave
/// <c>job.AsTask().Wait()</c> (or <c>.Result</c>) blocked forever when nobody does. This task is a
/// delegate task of a scheduler of its own, which is what makes the BCL's blocking wait ask that
/// scheduler to run it inline: the waiting thread then drives the runtime until the job completes,
/// as <see cref="Job{T}.Wait"/> does.
/// </summary>
/// <remarks>
/// <para><b>Protocol.</b>
/// 1. <see cref="Create{T}"/> starts the task on its scheduler, whose <c>QueueTask</c> registers a
///    runner as the job's one continuation. Nothing is queued anywhere else.
/// 2. When the job completes (on the thread that drives the runtime, whoever that is), the runner
///    executes the task inline there: its delegate only reads the completed job's outcome. The task
///    runs its continuations asynchronously, so no code of the awaiter's runs on the driving thread.
/// 3. A thread that blocks on the task (<c>Task.Wait</c> inlines a delegate task that has not run)
///    drives the runtime until the job completed, retrying while another thread drives; step 2 then
///    ran the task on this very thread. On the thread that already drives the runtime, in an outer
///    frame, the job can never complete while it blocks: that throws.</para>
/// <para><b>Cancellation.</b> A delegate task whose delegate throws <see cref="OperationCanceledException"/>
/// ends <see cref="TaskStatus.Faulted"/> unless the exception carries the task's own token, already
/// canceled. So the task gets a token of its own, and a job that ended canceled cancels that token
/// and rethrows with it: the task ends <see cref="TaskStatus.Canceled"/>, as a <c>Task</c> over any
/// other canceled job does. The token is canceled only inside the delegate, once the task runs, so
/// it never keeps the task from running. Unlike the other conversion (<see cref="TaskBridge{T}"/>),
/// the exception the task rethrows is therefore not the job's own, whose token a catch filter may
/// test: it is a new one with this token, and the job's as its inner exception (docs/guide.md says
/// so).</para>
/// </remarks>
internal static class DrivenTask
{
    internal static Task<T> Create<T>(Job<T> job, SingleThreadRuntime runtime)
    {
        var scheduler = new Scheduler<T>(runtime, job);
        var task = new Task<T>(static s => ((Scheduler<T>)s!).TakeResult(), scheduler, scheduler.Canceled.Token, TaskCreationOptions.RunContinuationsAsynchronously | TaskCreationOptions.DenyChildAttach);
        try
        {
            task.Start(scheduler);
        }
        catch (TaskSchedulerException wrapped) when (wrapped.InnerException is { } refused)
        {
            // Step 1 refused the registration (the job was already awaited, or the handle is stale):
            // throw what AsTask() of any other job throws, not the TPL's wrapper around it.
            ExceptionDispatchInfo.Throw(refused);
        }

        return task;
    }

    private sealed class Scheduler<T>(SingleThreadRuntime runtime, Job<T> job) : TaskScheduler
    {
        private Task? _task;

        public override int MaximumConcurrencyLevel => 1;

        /// <summary>The task's own token, canceled when the job ended canceled (see Cancellation above).</summary>
        internal CancellationTokenSource Canceled { get; } = new();

        internal T TakeResult()
        {
            try
            {
                return job.Wait(); // complete by now (step 2): no wait, consumes the job
            }
            catch (OperationCanceledException exception)
            {
                Canceled.Cancel();
                throw new OperationCanceledException(exception.Message, exception, Canceled.Token);
            }
        }

        protected override void QueueTask(Task task)
        {
            _task = task;
            job._box!.OnCompleted(new Runner(this), job._token); // step 1
        }

        protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued)
        {
            // The job's outcome is read (and its cell recycled) by the task's own delegate, so progress
            // is judged by the task, never by the cell.
            if (SchedulerContext.Current?.Runtime == runtime)
            {
                if (task.Status != TaskStatus.WaitingToRun)
                {
                    return false; // the runner is executing it right now, or it ran
                }

                throw new InvalidOperationException($"A Task of a job of this {runtime.GetType().Name} is waited for synchronously on the thread that drives the runtime: the job could only run after this wait returns. Await the job instead.");
            }

            // Step 3: drive until the job completes; the runner executes the task on this thread.
            runtime.DriveUntilCompleted(task);

            return TryExecuteTask(task) || task.IsCompleted;
        }

        protected override IEnumerable<Task> GetScheduledTasks() => _task is { } task ? [task] : [];

        private void Run() => TryExecuteTask(_task!);

        private sealed class Runner(Scheduler<T> scheduler) : WorkItem
        {
            internal override void Execute(PerThread state) => scheduler.Run(); // step 2

            // Step 2 reads a completed job's outcome into a task that runs its continuations asynchronously.
            internal override bool WakesOutside(JobRuntime runtime) => true;
        }
    }
}
