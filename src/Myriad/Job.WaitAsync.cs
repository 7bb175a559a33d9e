using System;
using System.Threading;
using Myriad.Coordination;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad;

public readonly partial struct Job
{
    /// <summary>
    /// <see cref="Job{T}.WaitAsync(TimeSpan, TimeProvider, CancellationToken)"/> with the arguments
    /// validated but for <paramref name="timeout"/>; a null <paramref name="timeProvider"/> means the
    /// clock of the calling runtime (the system clock outside any), as for <see cref="Delay(TimeSpan, CancellationToken)"/>.
    /// </summary>
    internal static Job<T> WaitAsyncCore<T>(Job<T> job, TimeSpan timeout, TimeProvider? timeProvider, CancellationToken cancellationToken)
    {
        TimerQueue.ThrowIfInvalid(timeout, nameof(timeout));

        // IsCompleted throws for a handle already consumed, as the misuse should, at the call.
        if (job.IsCompleted || (timeout == Timeout.InfiniteTimeSpan && !cancellationToken.CanBeCanceled))
        {
            return job;
        }

        job = Adapters.ConsumableByObserver(job);
        if (job.IsCompleted)
        {
            return job; // a select's job, forwarded, that completed meanwhile
        }

        var race = new WaitRace<T>(job._box!.OwnerRuntime, cancellationToken);
        race.Start(job, timeout, timeProvider is null ? null : TimerQueue.For(timeProvider));
        return race.Promise.Job;
    }

    /// <summary>
    /// One <see cref="WaitAsyncCore{T}"/> wait: the job, a timer and the caller's token race to complete
    /// <see cref="Promise"/>, the job the caller awaits instead.
    /// </summary>
    /// <remarks>
    /// <para><b>Parties.</b> The job's outcome arrives through an observer registered on its cell (no
    /// job of its own, so nothing of it can be abandoned by a runtime's disposal, and no await that
    /// could run a queued spawn inline first); the timer is a <see cref="TimerEntry"/> whose target is
    /// this object, on the clock of the calling runtime (virtual on a deterministic runtime); the
    /// token calls back through a registration. Each completes the promise with a <c>TrySet</c>: the
    /// promise's own claim picks the one winner.</para>
    /// <para><b>Protocol.</b>
    /// 1. <see cref="Start"/> registers the observer (a refused registration throws at the call, before
    ///    anything else exists; a job that completed meanwhile wins at once).
    /// 2. It then arms the timer and the registration, each under <see cref="_gate"/> and only while
    ///    the race is undecided (<see cref="_decided"/>); a zero timeout wins at once instead.
    /// 3. The winner, after its <c>TrySet</c> succeeded, runs <see cref="Decide"/>: under the gate it sets
    ///    <see cref="_decided"/> (once set, never unset) and takes what was armed, then, outside it,
    ///    cancels the timer (its entry leaves the wheel at once) and drops the registration (it leaves
    ///    the caller's token at once). An arming that comes after finds the race decided and undoes
    ///    itself, so nothing armed outlives the race.
    /// 4. A job that loses still ends some day and its outcome reaches the observer, which is the only
    ///    one left to see it: a failure other than a cancellation is reported as unobserved, a result
    ///    that owns something is disposed, as a <see cref="WhenAny{T}(Job{T}[])"/> loser's.</para>
    /// </remarks>
    private sealed class WaitRace<T>(Scheduling.JobRuntime? home, CancellationToken cancellationToken) : WorkItem
    {
        private static readonly Action<object?> s_onCanceled = static s => ((WaitRace<T>)s!).OnCanceled();

        /// <summary>The job the caller awaits instead of the one it gave.</summary>
        internal readonly Promise<T> Promise = new("Job.WaitAsync");

        private readonly Lock _gate = new();
        private readonly CancellationToken _cancellationToken = cancellationToken;
        private TimeSpan _timeout;
        private bool _decided;
        private TimerEntry? _timer;
        private CancellationTokenRegistration _registration;

        /// <summary>Steps 1 and 2.</summary>
        internal void Start(Job<T> job, TimeSpan timeout, TimerQueue? timers)
        {
            _timeout = timeout;
            Promise.Races([job._box]); // for the deadlock check: this promise waits for that job
            job._box!.OnCompleted(new Observer(this), job._token); // step 1; throws for a job awaited elsewhere

            if (timeout == TimeSpan.Zero)
            {
                OnTimeout(); // as Task.WaitAsync: no timer tick to wait for
            }
            else if (timeout != Timeout.InfiniteTimeSpan)
            {
                var timer = new TimerEntry(this);
                lock (_gate)
                {
                    if (!_decided)
                    {
                        _timer = timer;
                        if (timers is null)
                        {
                            TimerQueue.Schedule(timer, timeout); // the calling runtime's clock
                        }
                        else
                        {
                            timers.Schedule(timer, timeout, TimerQueue.CurrentRuntime);
                        }
                    }
                }
            }

            if (_cancellationToken.CanBeCanceled)
            {
                // Outside the gate: a token canceled already calls back at once, and its winner takes the gate.
                CancellationTokenRegistration registration = _cancellationToken.UnsafeRegister(s_onCanceled, this);
                bool kept;
                lock (_gate)
                {
                    kept = !_decided;
                    if (kept)
                    {
                        _registration = registration;
                    }
                }

                if (!kept)
                {
                    registration.Unregister();
                }
            }
        }

        /// <summary>The timer fired (on the runtime the wait started on, or the thread pool outside any).</summary>
        internal override void Execute(PerThread state) => OnTimeout();

        private void OnTimeout()
        {
            if (Promise.TrySetException(new TimeoutException($"The job did not complete within {_timeout}.")))
            {
                Decide();
            }
        }

        private void OnCanceled()
        {
            if (Promise.TrySetCanceled(_cancellationToken))
            {
                Decide();
            }
        }

        /// <summary>Step 3, by the winner.</summary>
        private void Decide()
        {
            TimerEntry? timer;
            CancellationTokenRegistration registration;
            Promise.ForgetRaced();
            lock (_gate)
            {
                _decided = true;
                timer = _timer;
                registration = _registration;
                _timer = null;
                _registration = default;
            }

            if (timer is not null)
            {
                TimerQueue.Cancel(timer);
            }

            registration.Unregister();
        }

        /// <summary>The job completed: it wins, or (step 4) its outcome has nobody left to go to.</summary>
        private void OnJobCompleted(JobCell cell, short token)
        {
            T result = ((JobBox<T>)cell).ConsumeResultForObserver(token, out Exception? error);
            if (error is null ? Promise.TrySetResult(result) : Promise.TrySetException(error))
            {
                Decide();
            }
            else
            {
                DropLoserOutcome(result, error, home); // a lock or permit acquired too late goes back
            }
        }

        private sealed class Observer(WaitRace<T> race) : CellObserver(completesOtherCells: true) // the race's promise
        {
            internal override void OnCellCompleted(JobCell cell, short token) => race.OnJobCompleted(cell, token);
        }
    }
}
