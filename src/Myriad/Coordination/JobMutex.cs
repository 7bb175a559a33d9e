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
    private TinyLock _lock;
    private bool _held;
    private long _generation;
    private WaiterQueue<VoidResult> _waiters;
    private SpareWaiter _spare;

    /// <summary>Whether some job holds the mutex.</summary>
    public bool IsLocked => Volatile.Read(ref _held);

    /// <summary>
    /// Acquires the mutex: completes at once if it is free, otherwise when every earlier waiter has
    /// had it. Dispose the result to release it.
    /// </summary>
    /// <param name="cancellationToken">Gives up waiting with <see cref="OperationCanceledException"/>
    /// (then the mutex was not acquired); a token that can be canceled makes the wait allocate.</param>
    public Job<Releaser> LockAsync(CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled<Releaser>(cancellationToken);
        }

        _lock.Enter();
        if (!_held)
        {
            _held = true;
            long generation = ++_generation;
            _lock.Exit();
            return new Releaser(this, generation);
        }

        SignalWaiter<Releaser> waiter = SignalWaiter<Releaser>.Rent(default, this, cancellationToken);
        _waiters.Enqueue(waiter);
        _lock.Exit();
        waiter.ArmCancellation();
        return waiter.Job;
    }

    /// <summary>Acquires the mutex if it is free (and nobody waits for it), without waiting.</summary>
    /// <param name="releaser">Dispose it to release the mutex; the default value if not acquired.</param>
    public bool TryLock(out Releaser releaser)
    {
        _lock.Enter();
        if (_held)
        {
            _lock.Exit();
            releaser = default;
            return false;
        }

        _held = true;
        long generation = ++_generation;
        _lock.Exit();
        releaser = new Releaser(this, generation);
        return true;
    }

    private void Release(long generation)
    {
        _lock.Enter();
        if (!_held || generation != _generation)
        {
            _lock.Exit();
            throw new InvalidOperationException("This JobMutex acquisition was already released: a Releaser must be disposed exactly once.");
        }

        IWaiter<VoidResult>? next = _waiters.DequeueClaimable();
        if (next is null)
        {
            _held = false;
            _lock.Exit();
            return;
        }

        var waiter = (SignalWaiter<Releaser>)next;
        waiter.Value = new Releaser(this, ++_generation); // the mutex stays held: ownership moves
        _lock.Exit();
        waiter.Complete(default);
    }

    void IWaiterHost<VoidResult>.RemoveWaiter(IWaiter<VoidResult> waiter)
    {
        _lock.Enter();
        _waiters.Remove(waiter);
        _lock.Exit();
    }

    ref SpareWaiter IWaiterHost<VoidResult>.Spare => ref _spare;

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
