using System;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Interop;

/// <summary>
/// <see cref="Job{T}.AsTask"/> and <see cref="Job.AsTask"/> for a pending job that no
/// single-threaded runtime owns (those get a <see cref="DrivenTask"/>) and whose result is read
/// without running user code (not a select: its handler runs then): a task that runs its
/// continuations asynchronously, completed by a continuation registered on the job's cell.
/// </summary>
/// <remarks>
/// <para><b>Why not <c>AsValueTask().AsTask()</c>.</b> That task runs its continuations inline when
/// it completes, so completing it is running its awaiters' code; on a runtime's thread, where the
/// job completes, that had to go to the .NET thread pool first (code that is not a job never runs on
/// a runtime's thread). A job awaiting the task then reached its runtime again whenever a pool thread
/// got to it: two hops, and on a <see cref="Scheduling.DeterministicRuntime"/> a moment that real time
/// chose instead of the seed. Completing a task that runs its continuations asynchronously runs
/// nobody's code, so it happens right where the job completes: a job awaiting the task is posted back
/// to its runtime from there (<see cref="ResumeContext"/>), and any other awaiter continues on the
/// thread pool, as before.</para>
/// <para>A result is set as is; a failure is copied from a completed task over the job
/// (<c>TrySetFromTask</c>), so a canceled job gives a canceled task that rethrows the job's own
/// <see cref="System.OperationCanceledException"/> (the other conversion, <see cref="DrivenTask"/>,
/// cannot: a delegate task is canceled only by its own token).</para>
/// </remarks>
internal sealed class TaskBridge<T> : WorkItem
{
    private readonly Job<T> _job;
    private readonly TaskCompletionSource<T>? _typed;
    private readonly TaskCompletionSource? _untyped;

    private TaskBridge(Job<T> job, bool typed)
    {
        _job = job;
        if (typed)
        {
            _typed = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        }
        else
        {
            _untyped = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }

    /// <summary>The task of a pending <see cref="Job{T}"/>; consumes the job (a handle already awaited or consumed throws).</summary>
    internal static Task<T> Typed(Job<T> job) => new TaskBridge<T>(job, typed: true).Register()._typed!.Task;

    /// <summary>The task of a pending <see cref="Job"/> (<typeparamref name="T"/> is VoidResult).</summary>
    internal static Task Untyped(Job<T> job) => new TaskBridge<T>(job, typed: false).Register()._untyped!.Task;

    private TaskBridge<T> Register()
    {
        _job._box!.OnCompleted(this, _job._token);
        return this;
    }

    // It completes a task that runs its continuations asynchronously: no awaiter's code runs here.
    internal override bool WakesOutside(Scheduling.JobRuntime runtime) => true;

    /// <summary>The job completed: takes its outcome (consuming it) into the task.</summary>
    internal override void Execute(PerThread state)
    {
        try
        {
            Transfer();
        }
        catch (InvalidOperationException misuse)
        {
            // Another consumer took the job's outcome between its completion and this item (a
            // misuse: the handle was also waited on or awaited): the task reports that misuse. Let
            // through, the exception would end the process from the thread that runs this item.
            if (_typed is not null)
            {
                _typed.TrySetException(misuse);
            }
            else
            {
                _untyped!.TrySetException(misuse);
            }
        }
    }

    private void Transfer()
    {
        if (_job.IsCompletedSuccessfully)
        {
            // Consumes the job. Only cells whose consumption runs no user code get here (a select,
            // whose handler runs when its result is read, keeps the other conversion), so this
            // cannot throw into the thread that completed the job.
            T result = _job.GetAwaiter().GetResult();
            if (_typed is not null)
            {
                _typed.TrySetResult(result);
            }
            else
            {
                _untyped!.TrySetResult();
            }

            return;
        }

        // A failure: a completed task over the job carries it exactly as the other conversion's task
        // does (a canceled job's own OperationCanceledException, which TrySetCanceled would replace).
        Task<T> completed = _job.AsValueTask().AsTask();
        if (_typed is not null)
        {
            _typed.TrySetFromTask(completed);
        }
        else
        {
            _untyped!.TrySetFromTask(completed); // a Task<VoidResult> is the plain Task it stands for
        }
    }
}
