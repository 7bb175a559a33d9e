using System;
using System.Threading;
using Myriad.Jobs;

namespace Myriad.Coordination;

/// <summary>
/// An asynchronous counting semaphore for jobs: at most <c>n</c> holders at once,
/// <c>using (await semaphore.AcquireAsync()) { ... }</c>. Waiters are served strictly in FIFO order,
/// and a waiting <see cref="AcquireAsync"/> can be canceled.
/// </summary>
/// <remarks>
/// <para><b>State</b> (under an internal lock): the free permits, at most <see cref="MaxCount"/>; the
/// FIFO of waiters. Invariant: jobs wait only while no permit is free. A release hands its permits
/// straight to the oldest waiters (so a newcomer cannot take a permit ahead of them), and only the
/// permits nobody waits for become free. Released waiters resume after the internal lock is released,
/// one at a time through the trampoline. A release that would take the free permits past
/// <see cref="MaxCount"/> (counted before any hand-off, as <see cref="SemaphoreSlim"/> counts) throws
/// and changes nothing.</para>
/// </remarks>
public sealed class JobSemaphore : IWaiterHost<VoidResult>
{
    private readonly int _maxCount;
    private int _count;
    private PrimitiveWaiters _waiters;

    /// <summary>Creates a semaphore with <paramref name="initialCount"/> free permits.</summary>
    /// <param name="initialCount">Permits free at the start.</param>
    /// <param name="maxCount">The most permits that can ever be free (releasing beyond it throws).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="initialCount"/> is negative or above
    /// <paramref name="maxCount"/>, or <paramref name="maxCount"/> is less than 1.</exception>
    public JobSemaphore(int initialCount, int maxCount = int.MaxValue)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxCount, 1);
        ArgumentOutOfRangeException.ThrowIfNegative(initialCount);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(initialCount, maxCount);
        _count = initialCount;
        _maxCount = maxCount;
    }

    /// <summary>Permits free now.</summary>
    public int CurrentCount
    {
        get
        {
            _waiters.Lock.Enter();
            int count = _count;
            _waiters.Lock.Exit();
            return count;
        }
    }

    /// <summary>The most permits that can be free at once.</summary>
    public int MaxCount => _maxCount;

    /// <summary>Takes a permit: at once if one is free, otherwise when every earlier waiter got one. Dispose the result to give it back.</summary>
    /// <remarks>The result owns the permit: whoever receives it must dispose it. To bound the wait, pass
    /// a token canceled after the timeout (<see cref="CancellationTokenSource.CancelAfter(TimeSpan)"/>).
    /// <see cref="Job.WhenAny{T}(Job{T}[])"/> and <see cref="Job.WhenAll{T}(Job{T}[])"/> dispose the
    /// releasers they drop (a loser's, or a success's next to a failure), so no permit is lost.</remarks>
    /// <param name="cancellationToken">Gives up waiting with <see cref="OperationCanceledException"/>
    /// (then no permit was taken); a token that can be canceled makes the wait allocate.</param>
    public Job<Releaser> AcquireAsync(CancellationToken cancellationToken = default) =>
        Acquire(new Releaser(this), cancellationToken);

    /// <summary>
    /// Takes a permit now or queues a waiter for one; the job completes with <paramref name="granted"/>
    /// (a <see cref="Releaser"/>, or nothing for <see cref="WaitAsync(CancellationToken)"/>).
    /// </summary>
    private Job<TResult> Acquire<TResult>(TResult granted, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled<TResult>(cancellationToken);
        }

        _waiters.Lock.Enter();
        if (_count > 0)
        {
            _count--;
            _waiters.Lock.Exit();
            return new Job<TResult>(granted);
        }

        return _waiters.EnqueueAndExit(this, granted, cancellationToken).Job;
    }

    /// <summary>
    /// Takes a permit, as <see cref="SemaphoreSlim.WaitAsync(CancellationToken)"/> does: give it back with
    /// <see cref="Release"/> (<c>await s.WaitAsync(); try { ... } finally { s.Release(); }</c>).
    /// <see cref="AcquireAsync"/> is the same wait with a <see cref="Releaser"/> for a <c>using</c> block.
    /// </summary>
    /// <param name="cancellationToken">Gives up waiting with <see cref="OperationCanceledException"/> (then no permit was taken).</param>
    public Job WaitAsync(CancellationToken cancellationToken = default)
    {
        // AcquireAsync without the releaser (the permit stays taken: Release gives it back). The
        // waiter is the job itself, not an adapter over AcquireAsync's job: plain code awaiting an
        // adapter would resume inside the releasing thread's Release, which a waiter of the
        // semaphore's own never does (see JobCell.ResumesForeignWaitersAsynchronously).
        return new Job(Acquire(default(VoidResult), cancellationToken));
    }

    /// <summary>
    /// Takes a permit if one comes within <paramref name="timeout"/>, as
    /// <see cref="SemaphoreSlim.WaitAsync(TimeSpan, CancellationToken)"/> does: true if it was taken (give
    /// it back with <see cref="Release"/>), false if the time ran out first, and then the wait has left
    /// the queue. The timeout runs on the calling runtime's clock, as
    /// <see cref="Job.Delay(TimeSpan, CancellationToken)"/> does (virtual on a <see cref="Scheduling.DeterministicRuntime"/>).
    /// </summary>
    /// <param name="timeout">How long to wait: zero takes a free permit or returns false at once;
    /// <see cref="Timeout.InfiniteTimeSpan"/> waits for good.</param>
    /// <param name="cancellationToken">Gives up waiting with <see cref="OperationCanceledException"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (other than
    /// infinite) or longer than about 49.7 days.</exception>
    public Job<bool> WaitAsync(TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        TimerQueue.ThrowIfInvalid(timeout, nameof(timeout));
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled<bool>(cancellationToken);
        }

        if (TryAcquire(out _))
        {
            return true; // the permit stays taken: Release gives it back
        }

        if (timeout == TimeSpan.Zero)
        {
            return false;
        }

        return timeout == Timeout.InfiniteTimeSpan ? WaitForGood(this, cancellationToken) : WaitLimited(this, timeout, cancellationToken);

        static async Job<bool> WaitForGood(JobSemaphore semaphore, CancellationToken cancellationToken)
        {
            await semaphore.AcquireAsync(cancellationToken); // the releaser is dropped: the permit stays taken
            return true;
        }
    }

    /// <summary>
    /// The bounded wait: a cancelable acquisition whose token a timer cancels, so that a wait that
    /// times out leaves the queue at once (a retry loop would otherwise leave one stale waiter per try).
    /// </summary>
    /// <remarks>
    /// <para><b>Who disposes the token source.</b> The timer's work item cancels the source; the wait,
    /// once its acquisition ended, takes the timer out of its wheel. <see cref="TimerQueue.Cancel"/>
    /// decides between them: true, the timer will never run, and the wait disposes the source; false,
    /// the timer fired and its work item (which may not have run yet) cancels the source and then
    /// disposes it. So a source is never canceled after its disposal.</para>
    /// </remarks>
    private static async Job<bool> WaitLimited(JobSemaphore semaphore, TimeSpan timeout, CancellationToken cancellationToken)
    {
        CancellationTokenSource limit = cancellationToken.CanBeCanceled
            ? CancellationTokenSource.CreateLinkedTokenSource(cancellationToken)
            : new CancellationTokenSource();
        CancellationToken limitToken = limit.Token; // before the timer exists: it may dispose the source at once
        var expiry = new CancelAndDispose(limit, cancellationToken);
        var timer = new TimerEntry(expiry);
        TimerQueue.Schedule(timer, timeout); // the calling runtime's clock, not CancelAfter's real time
        try
        {
            await semaphore.AcquireAsync(limitToken); // the releaser is dropped: the permit stays taken
            return true;
        }
        catch (OperationCanceledException) when (expiry.Fired)
        {
            return false; // the timer canceled the wait (before any cancel of the caller's), which took no permit
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // The caller's token canceled the linked source: the exception names the internal
            // source's token, and a caller's `catch (OperationCanceledException e) when
            // (e.CancellationToken == token)` must match, as with SemaphoreSlim.
            throw Internal.ThrowHelper.Canceled(cancellationToken);
        }
        finally
        {
            if (TimerQueue.Cancel(timer))
            {
                limit.Dispose();
            }
        }
    }

    /// <summary>The timer's work item of <see cref="WaitLimited"/>: cancels the wait's token source, then disposes it.</summary>
    private sealed class CancelAndDispose(CancellationTokenSource limit, CancellationToken caller) : Internal.WorkItem
    {
        private volatile bool _fired;

        /// <summary>Whether the timer canceled the source: set before the cancel, so a wait that sees its acquisition canceled and this false was canceled by the caller's token.</summary>
        internal bool Fired => _fired;

        internal override void Execute(Internal.PerThread state)
        {
            // A cancel of the caller's that came first (even one whose callback has not reached the
            // linked source yet) wins the tie, as with SemaphoreSlim: the wait ends canceled.
            _fired = !limit.IsCancellationRequested && !caller.IsCancellationRequested;
            limit.Cancel(); // the acquisition's callback takes the waiter out of the queue; it never throws
            limit.Dispose();
        }
    }

    /// <summary>Takes a permit if one is free, without waiting.</summary>
    /// <param name="releaser">Dispose it to give the permit back; the default value if none was taken.</param>
    public bool TryAcquire(out Releaser releaser)
    {
        _waiters.Lock.Enter();
        if (_count > 0)
        {
            _count--;
            _waiters.Lock.Exit();
            releaser = new Releaser(this);
            return true;
        }

        _waiters.Lock.Exit();
        releaser = default;
        return false;
    }

    /// <summary>Gives back <paramref name="releaseCount"/> permits, first to the oldest waiters.</summary>
    /// <remarks>
    /// <para>The bound is checked, as <see cref="SemaphoreSlim.Release(int)"/> checks it, against the
    /// free permits before any hand-off: the call succeeds only if <see cref="CurrentCount"/> plus
    /// <paramref name="releaseCount"/> is at most <see cref="MaxCount"/>, however many jobs wait. So
    /// whether it throws never depends on the waiters (or on a canceled waiter not yet unlinked).</para>
    /// <para>Releases are not matched with acquisitions: releasing a permit nobody holds (a
    /// <see cref="Releaser"/> disposed twice, say) is accepted while it fits under
    /// <see cref="MaxCount"/>, and adds a permit for good.</para>
    /// </remarks>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="releaseCount"/> is less than 1.</exception>
    /// <exception cref="SemaphoreFullException">More than <see cref="MaxCount"/> permits would be free
    /// (more releases than acquisitions). Nothing is released then: no waiter is handed a permit and
    /// <see cref="CurrentCount"/> is unchanged.</exception>
    public void Release(int releaseCount = 1)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(releaseCount, 1);
        var released = default(WaiterQueue<VoidResult>);
        _waiters.Lock.Enter();

        // Counting the waiters in (releasing past MaxCount when some of the permits go to them) would
        // make the outcome depend on how many waiters are queued, and on whether a canceled one is
        // still linked, and an overflow found after the hand-off could no longer change nothing.
        int free = _count;
        if (releaseCount > _maxCount - free)
        {
            _waiters.Lock.Exit();
            throw new SemaphoreFullException($"Releasing {releaseCount} permit(s) with {free} free would leave more than MaxCount ({_maxCount}) free: a permit was released more times than it was acquired.");
        }

        int remaining = releaseCount;
        while (remaining > 0 && _waiters.Queue.DequeueClaimable() is { } waiter)
        {
            released.EnqueueClaimed(waiter);
            remaining--;
        }

        _count += remaining; // at most releaseCount, which the check above fitted under MaxCount
        _waiters.Lock.Exit();
        released.CompleteAll(default);
    }

    void IWaiterHost<VoidResult>.RemoveWaiter(IWaiter<VoidResult> waiter) => _waiters.Remove(waiter);

    ref SpareWaiter IWaiterHost<VoidResult>.Spare => ref _waiters.Spare;

    /// <summary>Gives one permit back to a <see cref="JobSemaphore"/> when disposed. Dispose it exactly once.</summary>
    /// <remarks>
    /// <para>Unlike <see cref="JobMutex.Releaser"/>, a second <see cref="Dispose"/> is not detected: it is
    /// one more <see cref="Release"/>, of a permit that is not held. The semaphore keeps no state per
    /// acquisition (so acquiring allocates nothing) and cannot tell one holder's permit from another's,
    /// and counting holders would only move the failure onto another holder's release. So it adds a
    /// permit, and from then on one job more than the semaphore allows can hold one at a time; only when
    /// that would leave more than <see cref="MaxCount"/> free does it throw
    /// <see cref="SemaphoreFullException"/>.</para>
    /// <para>Copies of a releaser (it is a struct) are the same permit: dispose only one of them.</para>
    /// </remarks>
    public readonly struct Releaser : IDisposable
    {
        private readonly JobSemaphore? _semaphore;

        internal Releaser(JobSemaphore semaphore) => _semaphore = semaphore;

        /// <summary>Releases the permit (see <see cref="Release"/>); call it once per acquisition. The default value does nothing.</summary>
        /// <exception cref="SemaphoreFullException">More than <see cref="MaxCount"/> permits would be free:
        /// this releaser (or a copy of it) was already disposed, or permits were otherwise released more
        /// times than acquired. A second dispose when the semaphore is not full does not throw (see the remarks).</exception>
        public void Dispose() => _semaphore?.Release();
    }
}
