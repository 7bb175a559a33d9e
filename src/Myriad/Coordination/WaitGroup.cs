using System;
using System.Threading;
using Myriad.Jobs;

namespace Myriad.Coordination;

/// <summary>
/// Waits for a collection of jobs to finish, like Go's <c>sync.WaitGroup</c>: <see cref="Add"/> the
/// number of jobs, each calls <see cref="Done"/> when finished, and <see cref="WaitAsync"/> completes
/// when the counter is back to zero.
/// </summary>
/// <remarks>
/// <para>State (under the lock): the counter, and the FIFO of waiting jobs. Invariant: jobs wait only
/// while the counter is above zero; the change that brings it to zero releases every waiter, after
/// the lock is released and one at a time through the trampoline, so releasing 100,000 waiters
/// neither blocks other callers nor nests 100,000 continuations.</para>
/// <para>A wait without a cancelable token uses a pooled waiter (no allocation in steady state).</para>
/// </remarks>
public sealed class WaitGroup : IWaiterHost<VoidResult>
{
    private TinyLock _lock;
    private long _count;
    private WaiterQueue<VoidResult> _waiters;
    private SpareWaiter _spare;

    /// <summary>The current counter.</summary>
    public long Count
    {
        get
        {
            _lock.Enter();
            long count = _count;
            _lock.Exit();
            return count;
        }
    }

    /// <summary>Adds <paramref name="delta"/> (which may be negative) to the counter; reaching zero releases every waiter.</summary>
    /// <exception cref="InvalidOperationException">The counter would become negative (more
    /// <see cref="Done"/> calls than added jobs); the counter is left unchanged.</exception>
    public void Add(int delta = 1)
    {
        var released = default(WaiterQueue<VoidResult>);
        _lock.Enter();
        long next = _count + delta;
        if (next < 0)
        {
            _lock.Exit();
            throw new InvalidOperationException($"The WaitGroup counter would become negative ({next}): Done was called more times than jobs were added.");
        }

        _count = next;
        if (next == 0)
        {
            _waiters.DrainClaimable(ref released);
        }

        _lock.Exit();
        while (released.Dequeue() is { } waiter)
        {
            waiter.Complete(default);
        }
    }

    /// <summary>Decrements the counter: one job finished.</summary>
    /// <exception cref="InvalidOperationException">The counter is already zero.</exception>
    public void Done() => Add(-1);

    /// <summary>A job that completes when the counter is zero (at once if it is zero now).</summary>
    /// <param name="cancellationToken">Stops waiting with <see cref="OperationCanceledException"/>;
    /// a token that can be canceled makes the wait allocate its waiter.</param>
    public Job WaitAsync(CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled(cancellationToken);
        }

        _lock.Enter();
        if (_count == 0)
        {
            _lock.Exit();
            return Job.CompletedJob;
        }

        SignalWaiter<VoidResult> waiter = SignalWaiter<VoidResult>.Rent(default, this, cancellationToken);
        _waiters.Enqueue(waiter);
        _lock.Exit();
        waiter.ArmCancellation();
        return new Job(waiter.Job);
    }

    void IWaiterHost<VoidResult>.RemoveWaiter(IWaiter<VoidResult> waiter)
    {
        _lock.Enter();
        _waiters.Remove(waiter);
        _lock.Exit();
    }

    ref SpareWaiter IWaiterHost<VoidResult>.Spare => ref _spare;
}
