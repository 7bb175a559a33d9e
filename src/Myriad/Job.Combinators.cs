using System;
using System.Collections.Generic;
using System.Linq;
using System.Diagnostics;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad;

public readonly partial struct Job
{
    /// <summary>
    /// Completes when every job has completed; consumes all of them. If any failed, throws the first
    /// failure (in argument order) once all have completed, so that every job's pooled state is
    /// released; <see cref="GetAllFailures"/> reaches every failure (as <c>Task.Exception</c> does).
    /// The <c>Exception</c> of its <see cref="AsTask"/> holds the first failure only, as a
    /// <c>ValueTask</c>'s task does: pass that exception to <see cref="GetAllFailures"/> for the others.
    /// As with <c>Task.WhenAll</c>, a cancellation is not a failure: when some jobs failed and others
    /// were canceled, the failures are thrown and reported; when none failed and some were canceled,
    /// it throws the first job's <see cref="OperationCanceledException"/>.
    /// </summary>
    /// <remarks>The handles are copied before this returns, as <c>Task.WhenAll</c> copies its array:
    /// the caller may reuse <paramref name="jobs"/> at once.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    public static Job WhenAll(params Job[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        return WhenAllCore(CopyOf(jobs));
    }

    /// <inheritdoc cref="WhenAll(Job[])"/>
    /// <remarks>The sequence is read to its end before this returns.</remarks>
    public static Job WhenAll(IEnumerable<Job> jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        return WhenAllCore(jobs.ToArray());
    }

    /// <summary>
    /// Completes with every job's result, in argument order; consumes all of them. If any failed,
    /// throws the first failure (in argument order) once all have completed; <see cref="GetAllFailures"/>
    /// reaches every failure. Cancellations count as in <see cref="WhenAll(Job[])"/>: a failure wins
    /// over a cancellation.
    /// </summary>
    /// <remarks>
    /// <para>The handles are copied before this returns: the caller may reuse <paramref name="jobs"/> at once.</para>
    /// <para><b>Results that must be disposed.</b> When one job fails, the results of the jobs that
    /// succeeded can no longer reach the caller. Those that implement <see cref="IDisposable"/> (a
    /// <see cref="Coordination.JobMutex.Releaser"/> or a <see cref="Coordination.JobSemaphore.Releaser"/>,
    /// say) are disposed then, so no lock or permit is lost; an exception from such a disposal is one
    /// more failure.</para>
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    public static Job<T[]> WhenAll<T>(params Job<T>[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        return WhenAllCore(CopyOf(jobs));
    }

    /// <inheritdoc cref="WhenAll{T}(Job{T}[])"/>
    /// <remarks>The sequence is read to its end before this returns. See <see cref="WhenAll{T}(Job{T}[])"/>
    /// for results that must be disposed.</remarks>
    public static Job<T[]> WhenAll<T>(IEnumerable<Job<T>> jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        return WhenAllCore(jobs.ToArray());
    }

    /// <summary>
    /// The cores read each handle only after the previous one completed, which may be long after the
    /// call returned; by then the caller may have reused its array for other jobs, and the jobs it
    /// gave would never be awaited (their failures lost, their pooled boxes never recycled).
    /// </summary>
    private static TJob[] CopyOf<TJob>(TJob[] jobs) => jobs.Length == 0 ? jobs : (TJob[])jobs.Clone();

    private static async Job WhenAllCore(Job[] jobs)
    {
        var outcome = new AllOutcome();
        foreach (Job job in jobs)
        {
            try
            {
                await job;
            }
            catch (Exception e)
            {
                outcome.Add(e);
            }
        }

        outcome.ThrowIfAny();
    }

    private static async Job<T[]> WhenAllCore<T>(Job<T>[] jobs)
    {
        var results = new T[jobs.Length];
        bool[]? succeeded = null;
        var outcome = new AllOutcome();
        for (int i = 0; i < jobs.Length; i++)
        {
            try
            {
                results[i] = await jobs[i];
                if (results[i] is IDisposable)
                {
                    (succeeded ??= new bool[jobs.Length])[i] = true;
                }
            }
            catch (Exception e)
            {
                outcome.Add(e);
            }
        }

        if (!outcome.Any)
        {
            return results;
        }

        // The results will not reach the caller: give back what they own (a lock, a permit).
        for (int i = 0; succeeded is not null && i < results.Length; i++)
        {
            if (succeeded[i] && results[i] is IDisposable owned)
            {
                try
                {
                    owned.Dispose();
                }
                catch (Exception e)
                {
                    outcome.AddDisposalFailure(e);
                }
            }
        }

        outcome.ThrowIfAny();
        return results; // unreachable
    }

    /// <summary>
    /// What <c>WhenAll</c> throws once every job completed, by <c>Task.WhenAll</c>'s rule: a
    /// cancellation is not a failure. If any job failed, the first failure (in argument order) is
    /// thrown and <see cref="GetAllFailures"/> reaches every failure, the cancellations left out (as
    /// the faulted <c>Task.WhenAll</c> task's <c>Exception</c> holds only the faults); otherwise the
    /// first cancellation is thrown. Without this rule a canceled job early in the list would hide a
    /// real failure behind an <see cref="OperationCanceledException"/>, which callers commonly catch
    /// as a normal shutdown.
    /// </summary>
    private struct AllOutcome
    {
        private List<Exception>? _failures;
        private JobFailure? _firstFailure;
        private Exception? _canceled;
        private JobFailure? _canceledFrom;

        /// <summary>Whether any job failed or was canceled.</summary>
        internal readonly bool Any => _failures is not null || _canceled is not null;

        /// <summary>Records what an await threw; call it in the catch, on the thread that caught it.</summary>
        internal void Add(Exception e)
        {
            // Taken at once, on the catching thread, so that a deep failure keeps crossing levels in linear time.
            JobFailure? from = JobFailure.TakeRethrown(e);
            if (e is OperationCanceledException)
            {
                if (_canceled is null)
                {
                    _canceled = e;
                    _canceledFrom = from;
                }

                return;
            }

            if (_failures is null)
            {
                _firstFailure = from;
            }

            (_failures ??= []).Add(e);
        }

        /// <summary>Records an exception from disposing a result that could not reach the caller: a failure.</summary>
        internal void AddDisposalFailure(Exception e) => (_failures ??= []).Add(e);

        internal readonly void ThrowIfAny()
        {
            if (_failures is not null)
            {
                JobFailure.Throw(RecordFailures(_failures), _firstFailure);
            }

            if (_canceled is not null)
            {
                JobFailure.Throw(_canceled, _canceledFrom);
            }
        }
    }

    /// <summary>
    /// Completes with the index of the first job to complete and that job, completed, as
    /// <c>Task.WhenAny</c> does: it does not throw when the winner failed; awaiting
    /// <c>Winner</c> throws its failure. Jobs are single-use, so WhenAny consumes them all: the others
    /// are awaited in the background and their outcomes discarded. A loser's failure other than a
    /// cancellation has no awaiter left, so it raises <see cref="Scheduling.JobRuntime.UnobservedException"/>
    /// of the loser's runtime (of the runtime whose thread observed it, for a job of none), as a
    /// detached job's failure does; with no runtime at all, it reaches
    /// <see cref="System.Threading.Tasks.TaskScheduler.UnobservedTaskException"/>, as a <c>Task.WhenAny</c> loser's does.
    /// </summary>
    /// <remarks>
    /// <para>Every handle is read before this returns: the caller may reuse <paramref name="jobs"/> at once.
    /// Because every job is consumed, the <c>Task.WhenAny</c> loop that handles tasks as they finish
    /// (remove the winner, call WhenAny again on the rest) does not carry over: spawn the jobs in a
    /// <see cref="JobScope{T}"/> and <c>await foreach</c> over it (completion order), or convert each
    /// job once with <see cref="Job{T}.AsTask"/>.</para>
    /// <para>To bound an acquisition (<c>mutex.LockAsync()</c>) with a timeout, prefer the operation's own
    /// <see cref="CancellationToken"/> (<see cref="CancellationTokenSource.CancelAfter(TimeSpan)"/>): a
    /// canceled wait acquires nothing. Racing it here is safe too (see <see cref="WhenAny{T}(Job{T}[])"/>).</para>
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="jobs"/> is empty.</exception>
    public static Job<(int Index, Job Winner)> WhenAny(params Job[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        if (jobs.Length == 0)
        {
            throw new ArgumentException("WhenAny needs at least one job.", nameof(jobs));
        }

        var race = new Promise<(int, Job)>("Job.WhenAny");
        for (int i = 0; i < jobs.Length; i++)
        {
            ConsumeInBackground(ObserveAsync(jobs[i], i, race));
        }

        return race.Job;
    }

    /// <inheritdoc cref="WhenAny(Job[])"/>
    /// <remarks>The sequence is read to its end before this returns.</remarks>
    public static Job<(int Index, Job Winner)> WhenAny(IEnumerable<Job> jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        return WhenAny(jobs.ToArray());
    }

    /// <summary>
    /// Completes with the index of the first job to complete and that job, completed (awaiting it gives
    /// its result or throws its failure); see <see cref="WhenAny(Job[])"/>.
    /// </summary>
    /// <remarks>A loser's result is discarded; one that implements <see cref="IDisposable"/> (a
    /// <see cref="Coordination.JobMutex.Releaser"/> or a <see cref="Coordination.JobSemaphore.Releaser"/>)
    /// is disposed, so racing an acquisition against a delay gives the lock back when the acquisition
    /// loses. An exception from that disposal has no awaiter: it is rethrown on the thread pool, as an
    /// <c>async void</c> method's would be.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="jobs"/> is empty.</exception>
    public static Job<(int Index, Job<T> Winner)> WhenAny<T>(params Job<T>[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        if (jobs.Length == 0)
        {
            throw new ArgumentException("WhenAny needs at least one job.", nameof(jobs));
        }

        var race = new Promise<(int, Job<T>)>("Job.WhenAny");
        for (int i = 0; i < jobs.Length; i++)
        {
            ConsumeInBackground(ObserveAsync(jobs[i], i, race));
        }

        return race.Job;
    }

    /// <inheritdoc cref="WhenAny{T}(Job{T}[])"/>
    /// <remarks>The sequence is read to its end before this returns.</remarks>
    public static Job<(int Index, Job<T> Winner)> WhenAny<T>(IEnumerable<Job<T>> jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        return WhenAny(jobs.ToArray());
    }

    // The observers never fail: the awaited job's outcome, failure included, is handed to the race as
    // a completed job. A loser's failure (any outcome after the winner was decided) cannot change the
    // race, and nobody holds the loser's handle any more (Task.WhenAny leaves the loser's exception in
    // the loser's task, which reports it when unobserved): it is reported as unobserved. A loser's
    // result that owns something is disposed. Completing the race is outside the try, so that a fault
    // there could not be mistaken for the job's failure and swallowed.
    private static async Job ObserveAsync(Job job, int index, Promise<(int, Job)> race)
    {
        Scheduling.JobRuntime? home = job._inner._box?.OwnerRuntime; // read before the await consumes the job
        Exception? error = null;
        try
        {
            await job;
        }
        catch (Exception e)
        {
            error = e;
        }

        if (!race.TrySetResult((index, error is null ? CompletedJob : FromException(error))) && error is not null)
        {
            ReportLoserFailure(home, error);
        }
    }

    /// <summary>
    /// A loser's failure, which nobody can observe any more (see <see cref="ObserveAsync(Job, int, Promise{ValueTuple{int, Job}})"/>).
    /// A job of no runtime, observed on a thread of none, has no runtime event to raise: its failure
    /// goes where a <c>Task.WhenAny</c> loser's would, to <see cref="System.Threading.Tasks.TaskScheduler.UnobservedTaskException"/>,
    /// through a faulted task nobody observes (raised when the garbage collector finalizes it).
    /// </summary>
    private static void ReportLoserFailure(Scheduling.JobRuntime? home, Exception error)
    {
        if (error is OperationCanceledException)
        {
            return; // a cancellation is not a failure to report, on a runtime (ReportDetachedFailure) or off one
        }

        if ((home ?? Scheduling.SchedulerContext.Current?.Runtime) is { } runtime)
        {
            runtime.ReportDetachedFailure(error);
        }
        else
        {
            _ = System.Threading.Tasks.Task.FromException(error);
        }
    }

    private static async Job ObserveAsync<T>(Job<T> job, int index, Promise<(int, Job<T>)> race)
    {
        Scheduling.JobRuntime? home = job._box?.OwnerRuntime; // read before the await consumes the job
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

        if (error is not null)
        {
            if (!race.TrySetResult((index, FromException<T>(error))))
            {
                ReportLoserFailure(home, error);
            }
        }
        else if (!race.TrySetResult((index, new Job<T>(result))) && result is IDisposable owned)
        {
            owned.Dispose(); // a loser's lock or permit goes back; a throw here reaches ObserverSink
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

        internal override void OnCellCompleted(JobCell cell, short token)
        {
            // An observer catches its job's failure, so this is null unless completing the race or
            // disposing a loser's result threw; that must not be lost, and must not unwind through
            // this completion. The one exception: an observer abandoned by its runtime's disposal
            // (its awaited job never completed) ends canceled, which is the disposal working as
            // documented, not a failure to report; rethrowing it would crash the process. Once the
            // disposal finished, the runtime's id resolves to nothing (null owner), which is the
            // usual case: the observer is woken when its job completes, after the disposal.
            Scheduling.JobRuntime? owner = cell.OwnerRuntime;
            if (cell.ConsumeForObserver(token) is { } error && !(error is OperationCanceledException && owner is null or { IsDisposed: true }))
            {
                ThrowHelper.ContinuationFailed(error);
            }
        }
    }
}
