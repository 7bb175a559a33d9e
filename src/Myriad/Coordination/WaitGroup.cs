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
    private PrimitiveWaiters _waiters;
    private long _count;

    /// <summary>The current counter.</summary>
    public long Count
    {
        get
        {
            _waiters.Lock.Enter();
            long count = _count;
            _waiters.Lock.Exit();
            return count;
        }
    }

    /// <summary>Adds <paramref name="delta"/> (which may be negative) to the counter; reaching zero releases every waiter.</summary>
    /// <exception cref="InvalidOperationException">The counter would become negative (more
    /// <see cref="Done"/> calls than added jobs); the counter is left unchanged.</exception>
    public void Add(int delta = 1) => Change(delta, byDone: false);

    private void Change(int delta, bool byDone)
    {
        var released = default(WaiterQueue<VoidResult>);
        _waiters.Lock.Enter();
        long next = _count + delta;
        if (next < 0)
        {
            _waiters.Lock.Exit();
            throw new InvalidOperationException(byDone
                ? $"The WaitGroup counter would become negative ({next}): Done was called more times than jobs were added."
                : $"The WaitGroup counter would become negative ({next}): Add({delta}) takes away more than the {next - delta} jobs counted now; the counter is left unchanged.");
        }

        _count = next;
        if (next == 0)
        {
            _waiters.Queue.DrainClaimable(ref released);
        }

        _waiters.Lock.Exit();
        released.CompleteAll(default);
    }

    /// <summary>Decrements the counter: one job finished.</summary>
    /// <exception cref="InvalidOperationException">The counter is already zero.</exception>
    public void Done() => Change(-1, byDone: true);

    /// <summary>A job that completes when the counter is zero (at once if it is zero now).</summary>
    /// <param name="cancellationToken">Stops waiting with <see cref="OperationCanceledException"/>;
    /// a token that can be canceled makes the wait allocate its waiter.</param>
    public Job WaitAsync(CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled(cancellationToken);
        }

        _waiters.Lock.Enter();
        if (_count == 0)
        {
            _waiters.Lock.Exit();
            return Job.CompletedJob;
        }

        return new Job(_waiters.EnqueueAndExit<VoidResult>(this, default, cancellationToken).Job);
    }

    void IWaiterHost<VoidResult>.RemoveWaiter(IWaiter<VoidResult> waiter) => _waiters.Remove(waiter);

    ref SpareWaiter IWaiterHost<VoidResult>.Spare => ref _waiters.Spare;
}
