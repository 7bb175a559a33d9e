using Myriad.Internal;
using System.Threading;
using Myriad.Jobs;

namespace Myriad.Coordination;

/// <summary>
/// The waiting side of a coordination primitive (<see cref="WaitGroup"/>, <see cref="JobMutex"/>,
/// <see cref="JobSemaphore"/>): its lock, its FIFO of waiters, and its spare waiter. The primitive
/// keeps its own state (counter, owner, permits) under the same lock.
/// </summary>
/// <remarks>
/// A mutable struct held in a field of its primitive and used in place (never copied). Waiting follows
/// the cancellation protocol of <see cref="QueuedWaiter{TItem, TResult}"/>: the waiter is
/// queued under the lock, the lock released, and only then the token callback armed.
/// </remarks>
internal struct PrimitiveWaiters
{
    internal TinyLock Lock;
    internal WaiterQueue<VoidResult> Queue;
    internal SpareWaiter Spare;

    /// <summary>
    /// With <see cref="Lock"/> held: queues a waiter of <paramref name="host"/> that will complete with
    /// <paramref name="value"/> (unless the releaser stamps another), releases the lock, arms the token.
    /// </summary>
    internal SignalWaiter<TResult> EnqueueAndExit<TResult>(IWaiterHost<VoidResult> host, TResult value, CancellationToken cancellationToken)
    {
        SignalWaiter<TResult> waiter = SignalWaiter<TResult>.Rent(host, cancellationToken);
        waiter.Value = value;
        Queue.Enqueue(waiter);
        Lock.Exit();
        waiter.ArmCancellation();
        return waiter;
    }

    /// <summary>Unlinks a canceled waiter if it is still queued (takes the lock).</summary>
    internal void Remove(IWaiter<VoidResult> waiter)
    {
        Lock.Enter();
        Queue.Remove(waiter);
        Lock.Exit();
    }
}
