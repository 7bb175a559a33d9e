using System;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>Small shared pieces of the awaiters and conversions.</summary>
internal static class Adapters
{
    /// <summary>
    /// Registers a continuation on a job's cell; a job without a cell is complete, so it runs now.
    /// False, with nothing registered, when the cell refused (see <see cref="JobCell.TryOnCompleted(object, short)"/>).
    /// </summary>
    internal static bool TryRegister(JobCell? cell, short token, object continuation) => TryRegister(cell, token, continuation, PerThread.CurrentOrNull);

    /// <summary><see cref="TryRegister(JobCell?, short, object)"/> for a caller that holds the calling thread's state (or null).</summary>
    internal static bool TryRegister(JobCell? cell, short token, object continuation, PerThread? state)
    {
        if (cell is null)
        {
            Trampoline.Dispatch(state ?? PerThread.Current, continuation);
            return true;
        }

        return cell.TryOnCompleted(continuation, token, state);
    }

    /// <summary>As <see cref="TryRegister(JobCell?, short, object)"/>, throwing what a refusal means (stale handle, job awaited twice).</summary>
    internal static void Register(JobCell? cell, short token, object continuation)
    {
        if (!TryRegister(cell, token, continuation))
        {
            cell!.ThrowRegistrationRefused(token);
        }
    }

    /// <summary>
    /// Registers the continuation of code that is not a job (an <c>async Task</c> method awaiting a
    /// job): it resumes as after awaiting a <c>Task</c> (see <see cref="ForeignContinuation"/>).
    /// </summary>
    internal static void RegisterForeign(JobCell? cell, short token, Action continuation, bool flowExecutionContext, bool continueOnCapturedContext)
    {
        ArgumentNullException.ThrowIfNull(continuation);
        Register(cell, token, ForeignContinuation.ForAction(continuation, flowExecutionContext, continueOnCapturedContext));
    }

    /// <summary>
    /// A job whose outcome a <see cref="CellObserver"/> may consume: <paramref name="job"/> itself, or,
    /// for a select's job, a job that awaits it. A select's handler runs when its result is consumed,
    /// which must happen in a job, never inside the completion an observer is called from.
    /// </summary>
    internal static Job<T> ConsumableByObserver<T>(Job<T> job) =>
        job._box is { ConsumingRunsUserCode: true } ? Forward(job) : job;

    /// <summary>Awaits a job and drops its result.</summary>
    internal static async Job<VoidResult> Discard<T>(Job<T> job)
    {
        await job;
        return default;
    }

    /// <summary>
    /// Awaits <paramref name="job"/> in a job of its own, whose pooled box is a <see cref="SourceBox{T}"/>:
    /// what <see cref="Job{T}.AsValueTask"/> converts when the job's own cell is not one (a channel's
    /// inline receiver).
    /// </summary>
    internal static async Job<T> Forward<T>(Job<T> job) => await job;

    /// <summary>
    /// Awaits a select's job in a job of its own, for <see cref="Job{T}.AsTask"/>: the handler runs
    /// when the result is consumed, and consumed by the task's own continuation it ran on whatever
    /// thread completed the select (a pool thread, beside the jobs of a current-thread runtime, and
    /// at a moment no seed chose). Called on the caller's thread, this job belongs to the caller's
    /// runtime, so the handler runs there, at a step that runtime schedules.
    /// </summary>
    internal static async Job<T> ConsumeForTask<T>(Job<T> job) => await job;
}
