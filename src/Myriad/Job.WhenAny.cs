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
    /// Completes with the index of the first job to complete and that job, completed, as
    /// <c>Task.WhenAny</c> does: it does not throw when the winner failed; awaiting
    /// <c>Winner</c> throws its failure. Jobs are single-use, so WhenAny consumes them all: the others
    /// are observed in the background and their outcomes discarded. A loser's failure other than a
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
    /// <exception cref="ArgumentException"><paramref name="jobs"/> is empty, or holds the same job twice
    /// (nothing is consumed then).</exception>
    public static Job<(int Index, Job Winner)> WhenAny(params Job[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        if (jobs.Length == 0)
        {
            throw new ArgumentException("WhenAny needs at least one job.", nameof(jobs));
        }

        var race = new Promise<(int, Job)>("Job.WhenAny");
        race.Races(RacedCellsOf(jobs, static j => (j._inner._box, j._inner._token)));
        for (int i = 0; i < jobs.Length; i++)
        {
            Watch(jobs[i]._inner, i, new UntypedRace(race));
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
    /// loses. An exception from that disposal has no awaiter: it is reported as a loser's failure is,
    /// to <see cref="Scheduling.JobRuntime.UnobservedException"/>.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="jobs"/> is empty, or holds the same job twice
    /// (nothing is consumed then).</exception>
    public static Job<(int Index, Job<T> Winner)> WhenAny<T>(params Job<T>[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        if (jobs.Length == 0)
        {
            throw new ArgumentException("WhenAny needs at least one job.", nameof(jobs));
        }

        var race = new Promise<(int, Job<T>)>("Job.WhenAny");
        race.Races(RacedCellsOf(jobs, static j => (j._box, j._token)));
        for (int i = 0; i < jobs.Length; i++)
        {
            Watch(jobs[i], i, new TypedRace<T>(race));
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

    /// <summary>
    /// The contestants' cells, for the diagnostics that follow a race (see <see cref="Promise{T}.Races"/>);
    /// read before any is watched. A job given twice is refused here, before any is consumed: watched
    /// twice, its second registration would fail as a second await does, and that misuse would
    /// decide the race as if the job had completed with it.
    /// </summary>
    /// <exception cref="ArgumentException">The same pending or cell-backed job appears twice.</exception>
    private static JobCell?[] RacedCellsOf<TJob>(TJob[] jobs, Func<TJob, (JobCell? Cell, short Token)> handleOf)
    {
        var cells = new JobCell?[jobs.Length];
        for (int i = 0; i < jobs.Length; i++)
        {
            cells[i] = handleOf(jobs[i]).Cell;
        }

        ThrowIfRepeated(jobs, cells, handleOf);
        return cells;
    }

    /// <summary>Above this many contestants, repeats are found with a set instead of comparing every pair.</summary>
    private const int PairwiseRepeatCheckLimit = 16;

    /// <summary>Throws for two handles of one cell with one token (the tokens are read again from the jobs: no array for them in the common, short race).</summary>
    private static void ThrowIfRepeated<TJob>(TJob[] jobs, JobCell?[] cells, Func<TJob, (JobCell? Cell, short Token)> handleOf)
    {
        if (cells.Length <= PairwiseRepeatCheckLimit)
        {
            for (int i = 1; i < cells.Length; i++)
            {
                for (int k = 0; cells[i] is not null && k < i; k++)
                {
                    if (ReferenceEquals(cells[i], cells[k]) && handleOf(jobs[i]).Token == handleOf(jobs[k]).Token)
                    {
                        ThrowRepeated(k, i);
                    }
                }
            }

            return;
        }

        var seen = new Dictionary<(JobCell, short), int>(cells.Length);
        for (int i = 0; i < cells.Length; i++)
        {
            if (cells[i] is { } cell && !seen.TryAdd((cell, handleOf(jobs[i]).Token), i))
            {
                ThrowRepeated(seen[(cell, handleOf(jobs[i]).Token)], i);
            }
        }

        static void ThrowRepeated(int first, int second) => throw RepeatedJob(first, second, "WhenAny cannot watch it twice");
    }

    /// <summary>The misuse of one job given twice to a combinator (<c>WhenAny</c> refuses it, <c>WhenAll</c> fails with it).</summary>
    private static ArgumentException RepeatedJob(int first, int second, string consequence) => new(
        $"The job at index {second} is the job at index {first}: a job is awaited once, so {consequence}. Pass each job once.",
        "jobs");

    /// <summary>
    /// Registers an observer for one contestant of a WhenAny race. Nothing runs here: a spawned job
    /// still queued stays queued (an await would run it on this thread first, join helping, and it
    /// would win for having been run first), and a job abandoned by its runtime's disposal still
    /// reaches the race, ending canceled.
    /// </summary>
    private static void Watch<T, TRace>(Job<T> job, int index, TRace race)
        where TRace : IAnyRace<T>
    {
        if (job._box is not { } box)
        {
            AnyObserver<T, TRace>.Offer(race, index, job._result, error: null, home: null); // completed synchronously
            return;
        }

        if (box.ConsumingRunsUserCode)
        {
            Watch(Adapters.ConsumableByObserver(job), index, race);
            return;
        }

        if (box.IsCompletedNoThrow(job._token))
        {
            // Completed already: offered here, in argument order, as a job completed without a cell
            // is. Through the observer, the trampoline could defer it at its depth limit, and a later
            // contestant that completed without a cell would win instead.
            AnyObserver<T, TRace>.Consume(box, job._token, race, index, box.OwnerRuntime);
            return;
        }

        try
        {
            box.OnCompleted(new AnyObserver<T, TRace>(race, index, box.OwnerRuntime), job._token);
        }
        catch (InvalidOperationException misuse)
        {
            // The handle was consumed or is awaited elsewhere: that is this contestant's outcome, as
            // awaiting it would have thrown.
            AnyObserver<T, TRace>.Offer(race, index, default!, misuse, box.OwnerRuntime);
        }
    }

    /// <summary>The promise of a WhenAny race, typed (<see cref="TypedRace{T}"/>) or not (<see cref="UntypedRace"/>).</summary>
    private interface IAnyRace<T>
    {
        /// <summary>Completes the race with contestant <paramref name="index"/>'s outcome; false if another one won.</summary>
        bool TryWin(int index, T result, Exception? error);
    }

    private readonly struct TypedRace<T>(Promise<(int, Job<T>)> race) : IAnyRace<T>
    {
        public bool TryWin(int index, T result, Exception? error) =>
            race.TryDecide((index, error is null ? new Job<T>(result) : FromException<T>(error)));
    }

    private readonly struct UntypedRace(Promise<(int, Job)> race) : IAnyRace<VoidResult>
    {
        public bool TryWin(int index, VoidResult result, Exception? error) =>
            race.TryDecide((index, error is null ? CompletedJob : FromException(error)));
    }

    /// <summary>
    /// One contestant's observer: hands the outcome to the race, or, for a loser (any outcome after the
    /// race was decided), reports a failure nobody can observe any more and disposes a result that owns
    /// something (a lock's or a permit's releaser, so that racing an acquisition against a delay gives
    /// the lock back when the acquisition loses; see <see cref="DropLoserOutcome{T}"/>). Called inline by
    /// the completing thread, so it never throws: a disposal that throws is rethrown on the thread
    /// pool, as an <c>async void</c> method's exception would be.
    /// </summary>
    private sealed class AnyObserver<T, TRace>(TRace race, int index, Scheduling.JobRuntime? home) : CellObserver(completesOtherCells: true) // the race's promise
        where TRace : IAnyRace<T>
    {
        internal override void OnCellCompleted(JobCell cell, short token) => Consume((JobBox<T>)cell, token, race, index, home);

        /// <summary>Takes the contestant's outcome (which recycles its box: <paramref name="home"/> is read before) and offers it to the race.</summary>
        internal static void Consume(JobBox<T> box, short token, TRace race, int index, Scheduling.JobRuntime? home)
        {
            T result = box.ConsumeResultForObserver(token, out Exception? error);
            Offer(race, index, result, error, home);
        }

        internal static void Offer(TRace race, int index, T result, Exception? error, Scheduling.JobRuntime? home)
        {
            if (!race.TryWin(index, result, error))
            {
                DropLoserOutcome(result, error, home);
            }
        }
    }

    /// <summary>
    /// The outcome of a race's loser (a <see cref="WhenAny(Job[])"/> contestant, a job that
    /// <see cref="Job{T}.WaitAsync(TimeSpan, CancellationToken)"/> gave up on), which nobody can observe
    /// any more: a failure other than a cancellation is reported (<see cref="ReportLoserFailure"/>), a
    /// result that owns something (a lock's or a permit's releaser) is disposed.
    /// </summary>
    /// <remarks>The disposal goes through the trampoline, not inline: giving a lock back completes the
    /// next waiter, and when that waiter lost a race too, its observer gives the lock back in turn,
    /// inside the first one's completion. Inline, a few thousand abandoned acquisitions queued on one
    /// mutex overflowed the stack.</remarks>
    private static void DropLoserOutcome<T>(T result, Exception? error, Scheduling.JobRuntime? home)
    {
        if (error is not null)
        {
            ReportLoserFailure(home, error);
        }
        else if (result is IDisposable owned)
        {
            Trampoline.Dispatch(new DisposeWork(owned, home));
        }
    }

    private sealed class DisposeWork(IDisposable owned, Scheduling.JobRuntime? home) : WorkItem
    {
        internal override void Execute(PerThread state)
        {
            try
            {
                owned.Dispose();
            }
            catch (Exception e)
            {
                // Nobody awaits it, and it must not unwind through a completion: reported as a
                // loser's failure, to the runtime's UnobservedException (rethrown on the thread pool,
                // it ended the process).
                ReportLoserFailure(home, e);
            }
        }
    }

    /// <summary>
    /// A loser's failure, which nobody can observe any more (see <see cref="AnyObserver{T, TRace}"/>).
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
}
