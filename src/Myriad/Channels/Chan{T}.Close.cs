using System;
using Myriad.Coordination;

namespace Myriad.Channels;

public sealed partial class Chan<T>
{
    /// <summary>
    /// Closes the channel (Go's <c>close(ch)</c>): sends fail from now on, including those waiting now;
    /// receivers drain the buffered items, then see the channel as closed. Every waiting receiver and
    /// sender wakes.
    /// </summary>
    /// <param name="error">If not null, receivers that find the channel closed and drained throw this
    /// exception (the same instance for all of them) instead of reporting a clean close.</param>
    /// <exception cref="InvalidOperationException">The channel is already closed (closing twice is a
    /// program error, as in Go).</exception>
    /// <remarks>
    /// Releasing the waiters happens after the lock is released, one at a time, each completion going
    /// through the trampoline: closing a channel with 100,000 waiting receivers neither holds the lock
    /// while user code runs nor nests 100,000 continuations on the stack.
    /// </remarks>
    public void Close(Exception? error = null)
    {
        if (!TryClose(error))
        {
            throw new InvalidOperationException("The channel is already closed; a channel can be closed only once.");
        }
    }

    /// <summary><see cref="Close"/> that returns false instead of throwing when the channel is already
    /// closed (<see cref="System.Threading.Channels.ChannelWriter{T}.TryComplete"/>).</summary>
    internal bool TryClose(Exception? error)
    {
        var receivers = default(WaiterQueue<T>);
        var senders = default(WaiterQueue<T>);
        _lock.Enter();
        if (_closed is not null)
        {
            _lock.Exit();
            return false;
        }

        _closed = error ?? Chan.ClosedCleanly;
        bool inlineWaiting = TryClaimInlineReceiverLocked(); // invariant 5: it is the oldest receiver
        _receivers.DrainClaimable(ref receivers); // invariant 1: the buffer is empty if any receiver waits
        _senders.DrainClaimable(ref senders);
        KeepGivenBackItemsLocked(ref senders);
        _lock.Exit();

        // The private queues hold claimed waiters only: nobody else touches them until they complete.
        if (inlineWaiting)
        {
            ((IWaiter<T>)this).CompleteClosed(error);
        }

        receivers.CompleteAllClosed(error);
        senders.CompleteAllClosed(error);
        OnClosedForBridge();
        return true;
    }

    /// <summary>
    /// Under the lock, at the close: puts the given-back items among <paramref name="senders"/> back
    /// in the senders' queue, in their order, for the receivers to drain; only the real sends stay in
    /// <paramref name="senders"/>, to fail. Their sends succeeded, so the close must not drop them
    /// (see Chan{T}.GiveBack.cs).
    /// </summary>
    private void KeepGivenBackItemsLocked(ref WaiterQueue<T> senders)
    {
        if (senders.IsEmpty)
        {
            return;
        }

        var failing = default(WaiterQueue<T>);
        while (senders.Dequeue() is { } waiter)
        {
            if (waiter is GivenBackItem<T>)
            {
                _senders.Enqueue(waiter);
            }
            else
            {
                failing.EnqueueClaimed(waiter);
            }
        }

        senders = failing;
    }
}
