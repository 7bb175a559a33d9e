using System;
using System.Threading;
using Myriad.Coordination;

namespace Myriad;

public readonly partial struct Job
{
    /// <summary>
    /// <see cref="Job{T}.WaitAsync(TimeSpan, TimeProvider, CancellationToken)"/> with the arguments
    /// validated but for <paramref name="timeout"/>; a null <paramref name="timeProvider"/> means the
    /// clock of the calling runtime (the system clock outside any), as for <see cref="Delay(TimeSpan, CancellationToken)"/>.
    /// </summary>
    /// <remarks>
    /// <para><b>The race.</b> Two background jobs, each consumed by the combinators' shared observer
    /// (as <see cref="WhenAny(Job[])"/>'s are), race to complete one promise:
    /// 1. the observer awaits the job and hands its outcome over, failure included;
    /// 2. the time limit awaits a delay of <paramref name="timeout"/> (an infinite one when there is
    ///    none) on a token source linked to the caller's token, and then completes the promise with
    ///    <see cref="TimeoutException"/>, or, when the caller's token ended the delay, as canceled.
    /// The first to complete the promise wins. An observer that wins cancels the token source, so
    /// that the delay leaves its timer wheel (and the caller's token) at once rather than at its due
    /// time; a time limit that wins leaves the job to its observer, which reports a later failure as
    /// unobserved and disposes a later result that owns something, as a WhenAny loser's.</para>
    /// <para><b>Who disposes the token source.</b> Both jobs leave the race when they end; the second to
    /// leave disposes it. The observer cancels it before it leaves, so a cancel never meets a disposed
    /// source.</para>
    /// </remarks>
    internal static Job<T> WaitAsyncCore<T>(Job<T> job, TimeSpan timeout, TimeProvider? timeProvider, CancellationToken cancellationToken)
    {
        TimerQueue.ThrowIfInvalid(timeout, nameof(timeout));

        // IsCompleted throws for a handle already consumed, as the misuse should, at the call.
        if (job.IsCompleted || (timeout == Timeout.InfiniteTimeSpan && !cancellationToken.CanBeCanceled))
        {
            return job;
        }

        var race = new WaitRace<T>(timeout, cancellationToken);
        ConsumeInBackground(ObserveForWaitAsync(job, race)); // step 1
        ConsumeInBackground(TimeLimitAsync(timeout, timeProvider is null ? null : TimerQueue.For(timeProvider), race)); // step 2
        return race.Promise.Job;
    }

    private static async Job ObserveForWaitAsync<T>(Job<T> job, WaitRace<T> race)
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

        bool won = error is null ? race.Promise.TrySetResult(result) : race.Promise.TrySetException(error);
        if (won)
        {
            race.Stop.Cancel(); // ends the time limit's delay now
        }
        else if (error is not null)
        {
            ReportLoserFailure(home, error);
        }
        else if (result is IDisposable owned)
        {
            owned.Dispose(); // a lock or permit acquired too late goes back; a throw here reaches ObserverSink
        }

        race.Leave();
    }

    private static async Job TimeLimitAsync<T>(TimeSpan timeout, TimerQueue? timers, WaitRace<T> race)
    {
        try
        {
            await DelayCore(timeout, timers, race.Stop.Token);
            race.Promise.TrySetException(new TimeoutException($"The job did not complete within {timeout}."));
        }
        catch (OperationCanceledException) when (race.CallerToken.IsCancellationRequested)
        {
            race.Promise.TrySetCanceled(race.CallerToken);
        }
        catch (OperationCanceledException)
        {
            // The job won and canceled the delay.
        }
        finally
        {
            race.Leave();
        }
    }

    /// <summary>The shared state of one <see cref="WaitAsyncCore{T}"/> race.</summary>
    private sealed class WaitRace<T>(TimeSpan timeout, CancellationToken callerToken)
    {
        /// <summary>The job WaitAsync returns.</summary>
        internal readonly Promise<T> Promise = new(timeout == Timeout.InfiniteTimeSpan ? "Job.WaitAsync(token)" : "Job.WaitAsync(timeout)");

        internal readonly CancellationToken CallerToken = callerToken;

        /// <summary>Linked to the caller's token; canceled also by an observer that wins.</summary>
        internal readonly CancellationTokenSource Stop = callerToken.CanBeCanceled
            ? CancellationTokenSource.CreateLinkedTokenSource(callerToken)
            : new CancellationTokenSource();

        /// <summary>Background jobs still in the race: 2, then 1, then 0 (the last one disposes <see cref="Stop"/>).</summary>
        private int _members = 2;

        internal void Leave()
        {
            if (Interlocked.Decrement(ref _members) == 0)
            {
                Stop.Dispose();
            }
        }
    }
}
