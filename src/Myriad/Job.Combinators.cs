using System;
using System.Diagnostics;
using System.Runtime.ExceptionServices;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad;

public readonly partial struct Job
{
    /// <summary>
    /// Completes when every job has completed; consumes all of them. If any failed, throws the first
    /// failure (in argument order) once all have completed, so that every job's pooled state is released.
    /// </summary>
    /// <remarks>The handles are copied before this returns, as <c>Task.WhenAll</c> copies its array:
    /// the caller may reuse <paramref name="jobs"/> at once.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    public static Job WhenAll(params Job[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        return WhenAllCore(CopyOf(jobs));
    }

    /// <summary>
    /// Completes with every job's result, in argument order; consumes all of them. If any failed,
    /// throws the first failure (in argument order) once all have completed.
    /// </summary>
    /// <remarks>
    /// <para>The handles are copied before this returns: the caller may reuse <paramref name="jobs"/> at once.</para>
    /// <para><b>Results that must be disposed.</b> When one job fails, the results of the jobs that
    /// succeeded are dropped with the result array: nobody can reach them any more. If they own
    /// something (a <see cref="Coordination.JobMutex.Releaser"/> or a
    /// <see cref="Coordination.JobSemaphore.Releaser"/>), it is never given back: the mutex stays
    /// locked and the permit is lost for good. Await such jobs one by one instead, and dispose each
    /// result you get.</para>
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    public static Job<T[]> WhenAll<T>(params Job<T>[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        return WhenAllCore(CopyOf(jobs));
    }

    /// <summary>
    /// The cores read each handle only after the previous one completed, which may be long after the
    /// call returned; by then the caller may have reused its array for other jobs, and the jobs it
    /// gave would never be awaited (their failures lost, their pooled boxes never recycled).
    /// </summary>
    private static TJob[] CopyOf<TJob>(TJob[] jobs) => jobs.Length == 0 ? jobs : (TJob[])jobs.Clone();

    private static async Job WhenAllCore(Job[] jobs)
    {
        ExceptionDispatchInfo? first = null;
        foreach (Job job in jobs)
        {
            try
            {
                await job;
            }
            catch (Exception e)
            {
                first ??= ExceptionDispatchInfo.Capture(e);
            }
        }

        first?.Throw();
    }

    private static async Job<T[]> WhenAllCore<T>(Job<T>[] jobs)
    {
        var results = new T[jobs.Length];
        ExceptionDispatchInfo? first = null;
        for (int i = 0; i < jobs.Length; i++)
        {
            try
            {
                results[i] = await jobs[i];
            }
            catch (Exception e)
            {
                first ??= ExceptionDispatchInfo.Capture(e);
            }
        }

        first?.Throw();
        return results;
    }

    /// <summary>
    /// Completes with the index of the first job to complete. Jobs are single-use, so WhenAny consumes
    /// them all: the winner's failure is rethrown by the returned job, the others are awaited in the
    /// background and their outcomes discarded (a loser's failure included).
    /// </summary>
    /// <remarks>
    /// <para>Every handle is read before this returns: the caller may reuse <paramref name="jobs"/> at once.</para>
    /// <para><b>Not a timeout for acquisitions.</b> A loser's result is discarded (and this overload
    /// has no result even for the winner). If it owns something (a <see cref="Coordination.JobMutex.Releaser"/>
    /// or a <see cref="Coordination.JobSemaphore.Releaser"/>), it is never given back: racing
    /// <c>mutex.LockAsync()</c> against <c>Job.Delay(timeout)</c> and losing leaves the mutex locked
    /// forever once the lock is granted to the discarded loser. Give up
    /// on such a wait with the operation's own <see cref="CancellationToken"/> instead (a token from
    /// <see cref="CancellationTokenSource.CancelAfter(TimeSpan)"/>): a canceled wait acquires nothing.</para>
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="jobs"/> is empty.</exception>
    public static Job<int> WhenAny(params Job[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        if (jobs.Length == 0)
        {
            throw new ArgumentException("WhenAny needs at least one job.", nameof(jobs));
        }

        var race = new Promise<int>();
        for (int i = 0; i < jobs.Length; i++)
        {
            ConsumeInBackground(ObserveAsync(jobs[i], i, race));
        }

        return race.Job;
    }

    /// <summary>Completes with the index and result of the first job to complete; see <see cref="WhenAny(Job[])"/>.</summary>
    /// <remarks>The losers' results are discarded: see <see cref="WhenAny(Job[])"/> before racing a job
    /// whose result must be disposed (a lock or a permit).</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="jobs"/> is empty.</exception>
    public static Job<(int Index, T Result)> WhenAny<T>(params Job<T>[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        if (jobs.Length == 0)
        {
            throw new ArgumentException("WhenAny needs at least one job.", nameof(jobs));
        }

        var race = new Promise<(int, T)>();
        for (int i = 0; i < jobs.Length; i++)
        {
            ConsumeInBackground(ObserveAsync(jobs[i], i, race));
        }

        return race.Job;
    }

    // The observers never fail: the awaited job's outcome, failure included, goes to the race. A
    // loser's failure (any outcome after the winner was decided) is dropped on purpose, as
    // Task.WhenAny drops it: the race already has its one outcome. Completing the race is outside
    // the try, so that a fault there could not be mistaken for the job's failure and swallowed.
    private static async Job ObserveAsync(Job job, int index, Promise<int> race)
    {
        Exception? error = null;
        try
        {
            await job;
        }
        catch (Exception e)
        {
            error = e;
        }

        if (error is null)
        {
            race.TrySetResult(index);
        }
        else
        {
            race.TrySetException(error);
        }
    }

    private static async Job ObserveAsync<T>(Job<T> job, int index, Promise<(int, T)> race)
    {
        Exception? error = null;
        T result = default!;
        try
        {
            result = await job;
        }
        catch (Exception e)
        {
            error = e;
        }

        if (error is null)
        {
            race.TrySetResult((index, result));
        }
        else
        {
            race.TrySetException(error);
        }
    }

    /// <summary>
    /// Consumes an observer job that nobody awaits. An unconsumed pending job is never released: its
    /// pooled box never goes back to its pool, and with <see cref="Diagnostics.JobDiagnostics.TrackLiveJobs"/>
    /// on it stays in the live-job dump forever. A job that completed synchronously has no box and
    /// needs nothing.
    /// </summary>
    private static void ConsumeInBackground(Job job)
    {
        if (job._inner._box is { } box)
        {
            Debug.Assert(!box.ConsumingRunsUserCode, "an async method's box runs no user code when consumed");
            box.OnCompleted(ObserverSink.Instance, job._inner._token);
        }
    }

    /// <summary>
    /// The one shared consumer of the combinators' background jobs (as <see cref="Scheduling.JobRuntime.Detach(Job)"/>
    /// consumes a job with one shared observer per runtime, but needing no runtime): releases the
    /// job's box when it completes, at no cost per job.
    /// </summary>
    private sealed class ObserverSink : CellObserver
    {
        internal static readonly ObserverSink Instance = new();

        internal override void OnCellCompleted(JobCell cell)
        {
            // An observer catches its job's failure, so this is null unless completing the race
            // itself threw; that must not be lost, and must not unwind through this completion.
            if (cell.ConsumeForObserver() is { } error)
            {
                ThrowHelper.ContinuationFailed(error);
            }
        }
    }
}
