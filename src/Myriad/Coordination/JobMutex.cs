using System;
using System.Threading;
using Myriad.Jobs;

namespace Myriad.Coordination;

/// <summary>
/// An asynchronous mutual-exclusion lock for jobs: <c>using (await mutex.LockAsync()) { ... }</c>.
/// Waiters are served strictly in FIFO order, and a waiting <see cref="LockAsync"/> can be canceled.
/// </summary>
/// <remarks>
/// <para><b>State</b> (under an internal lock): <c>_held</c>; <c>_generation</c>, incremented at every
/// acquisition and carried by the <see cref="Releaser"/> of that acquisition; the FIFO of waiters.
/// Invariant: jobs wait only while the mutex is held.</para>
/// <para><b>Hand-off.</b> Releasing with waiters present does not unlock: ownership passes directly
/// to the oldest waiter that can still be claimed (one whose wait was not canceled), which resumes
/// (after the internal lock is released, through the trampoline: a chain of 100,000 hand-offs does not
/// grow the stack). So a releasing job cannot barge back in ahead of the queue.</para>
/// <para><b>Misuse.</b> Disposing a releaser a second time, or after its acquisition was released,
/// throws <see cref="InvalidOperationException"/> (the generation no longer matches) instead of
/// unlocking somebody else's acquisition. Not reentrant: a job that locks twice waits for itself.</para>
/// </remarks>
public sealed class JobMutex : IWaiterHost<VoidResult>
{
    private bool _held;
    private long _generation;
    private PrimitiveWaiters _waiters;

    /// <summary>Whether some job holds the mutex.</summary>
    public bool IsLocked => Volatile.Read(ref _held);

    /// <summary>
    /// Acquires the mutex: completes at once if it is free, otherwise when every earlier waiter has
    /// had it. Dispose the result to release it.
    /// </summary>
    /// <remarks>The result owns the mutex: whoever receives it must dispose it. To bound the wait, pass
    /// a token canceled after the timeout (<see cref="CancellationTokenSource.CancelAfter(TimeSpan)"/>).
    /// <see cref="Job.WhenAny{T}(Job{T}[])"/> and <see cref="Job.WhenAll{T}(Job{T}[])"/> dispose the
    /// releasers they drop (a loser's, or a success's next to a failure), so combining the job with
    /// them cannot leave the mutex locked.</remarks>
    /// <param name="cancellationToken">Gives up waiting with <see cref="OperationCanceledException"/>
    /// (then the mutex was not acquired); a token that can be canceled makes the wait allocate.</param>
    public Job<Releaser> LockAsync(CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled<Releaser>(cancellationToken);
        }

        _waiters.Lock.Enter();
        if (!_held)
        {
            _held = true;
            long generation = ++_generation;
            _waiters.Lock.Exit();
            return new Releaser(this, generation);
        }

        return _waiters.EnqueueAndExit<Releaser>(this, default, cancellationToken).Job; // the releaser is stamped at hand-off
    }

    /// <summary>Acquires the mutex if it is free (and nobody waits for it), without waiting.</summary>
    /// <param name="releaser">Dispose it to release the mutex; the default value if not acquired.</param>
    public bool TryLock(out Releaser releaser)
    {
        _waiters.Lock.Enter();
        if (_held)
        {
            _waiters.Lock.Exit();
            releaser = default;
            return false;
        }

        _held = true;
        long generation = ++_generation;
        _waiters.Lock.Exit();
        releaser = new Releaser(this, generation);
        return true;
    }

    private void Release(long generation)
    {
        _waiters.Lock.Enter();
        if (!_held || generation != _generation)
        {
            _waiters.Lock.Exit();
            throw new InvalidOperationException("This JobMutex acquisition was already released: a Releaser must be disposed exactly once.");
        }

        IWaiter<VoidResult>? next = _waiters.Queue.DequeueClaimable();
        if (next is null)
        {
            _held = false;
            _waiters.Lock.Exit();
            return;
        }

        var waiter = (SignalWaiter<Releaser>)next;
        waiter.Value = new Releaser(this, ++_generation); // the mutex stays held: ownership moves
        _waiters.Lock.Exit();
        waiter.Complete(default);
    }

    void IWaiterHost<VoidResult>.RemoveWaiter(IWaiter<VoidResult> waiter) => _waiters.Remove(waiter);

    ref SpareWaiter IWaiterHost<VoidResult>.Spare => ref _waiters.Spare;

    /// <summary>Releases one acquisition of a <see cref="JobMutex"/> when disposed.</summary>
    public readonly struct Releaser : IDisposable
    {
        private readonly JobMutex? _mutex;
        private readonly long _generation;

        internal Releaser(JobMutex mutex, long generation)
        {
            _mutex = mutex;
            _generation = generation;
        }

        /// <summary>Releases the mutex, handing it to the oldest waiter if any. The default value does nothing.</summary>
        /// <exception cref="InvalidOperationException">This acquisition was already released.</exception>
        public void Dispose() => _mutex?.Release(_generation);
    }
}
