using System;
using System.Collections.Generic;
using System.Linq;
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
    /// the caller may reuse <paramref name="jobs"/> at once. A job given twice is awaited once: the
    /// combined job then fails, and its failures (<see cref="GetAllFailures"/>) include an
    /// <see cref="ArgumentException"/> naming both indexes.</remarks>
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
    /// <para>The handles are copied before this returns: the caller may reuse <paramref name="jobs"/> at once.
    /// A job given twice is awaited once: the combined job then fails, and its failures
    /// (<see cref="GetAllFailures"/>) include an <see cref="ArgumentException"/> naming both indexes.</para>
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
        for (int i = 0; i < jobs.Length; i++)
        {
            try
            {
                await jobs[i];
            }
            catch (Exception e)
            {
                outcome.Add(NameRepeat(jobs, i, e, static j => (j._inner._box, j._inner._token)));
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
                outcome.Add(NameRepeat(jobs, i, e, static j => (j._box, j._token)));
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
    /// The failure of the await of <paramref name="jobs"/>[<paramref name="index"/>]: for a handle
    /// given twice, whose second await found the job consumed by the first (the stale-handle
    /// misuse), an <see cref="ArgumentException"/> naming both indexes, as <c>WhenAny</c> names them.
    /// <c>WhenAny</c> refuses the repeat before it watches anything, since a repeat would decide its
    /// race; here it fails only the combined job, so it is named after the fact, at no cost to the
    /// calls that pass each job once (checking up front takes a set as large as the input). Only
    /// that misuse's own exception starts the scan: many jobs failing with an
    /// <see cref="InvalidOperationException"/> of their own must not make the call quadratic.
    /// </summary>
    private static Exception NameRepeat<TJob>(TJob[] jobs, int index, Exception error, Func<TJob, (JobCell? Cell, short Token)> handleOf)
    {
        if (ThrowHelper.IsAwaitedOrConsumedTwice(error) && handleOf(jobs[index]) is ({ } cell, short token))
        {
            for (int k = 0; k < index; k++)
            {
                (JobCell? other, short otherToken) = handleOf(jobs[k]);
                if (ReferenceEquals(other, cell) && otherToken == token)
                {
                    return RepeatedJob(k, index, "WhenAll cannot await it twice");
                }
            }
        }

        return error;
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
}
