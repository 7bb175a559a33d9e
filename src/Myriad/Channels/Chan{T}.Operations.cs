using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Channels;
using Myriad.Coordination;
using Myriad.Jobs;

namespace Myriad.Channels;

public sealed partial class Chan<T>
{
    /// <summary>
    /// Sends <paramref name="item"/>: completes at once if a receiver is waiting (it gets the item) or
    /// buffer space is free; otherwise waits, in FIFO order with other senders, until a receiver takes
    /// the item (unbuffered) or space frees up (buffered).
    /// </summary>
    /// <param name="item">The item to send.</param>
    /// <param name="cancellationToken">Cancels a waiting send: the job then throws
    /// <see cref="System.OperationCanceledException"/> and the item was not sent (never both).
    /// A token that can be canceled makes a waiting send allocate its waiter.</param>
    /// <returns>A job that completes when the item was taken or buffered. It throws
    /// <see cref="ChannelClosedException"/> if the channel is closed, or closes while the send waits.</returns>
    public Job SendAsync(T item, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled(cancellationToken);
        }

        _lock.Enter();
        Status status = TrySendLocked(item, out IWaiter<T>? receiver);
        if (status == Status.WouldBlock)
        {
            SendWaiter<T> waiter = SendWaiter<T>.Rent(item, this, cancellationToken);
            _senders.Enqueue(waiter);
            _lock.Exit();
            waiter.ArmCancellation();
            return new Job(waiter.Job);
        }

        _lock.Exit();
        if (status == Status.Closed)
        {
            return Job.FromException(ChanErrors.ForSend(CloseError));
        }

        if (receiver is not null)
        {
            Wake(receiver, item);
        }

        return Job.CompletedJob;
    }

    /// <summary>
    /// Receives an item: completes at once if one is buffered or a sender is waiting; otherwise waits,
    /// in FIFO order with other receivers.
    /// </summary>
    /// <param name="cancellationToken">Cancels a waiting receive: the job then throws
    /// <see cref="System.OperationCanceledException"/> and no item was taken (never both).</param>
    /// <returns>A job with the item. Once the channel is closed and drained it throws
    /// <see cref="ChannelClosedException"/>, or the error the channel was closed with.</returns>
    public Job<T> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled<T>(cancellationToken);
        }

        _lock.Enter();
        Status status = TryReceiveLocked(out T item, out IWaiter<T>? sender);
        if (status == Status.WouldBlock)
        {
            return WaitToReceiveLocked(cancellationToken);
        }

        _lock.Exit();
        if (sender is not null)
        {
            Wake(sender, default!);
        }

        AfterReceive();
        return status == Status.Done ? new Job<T>(item) : Job.FromException<T>(CloseError ?? ChanErrors.ForReceive());
    }

    /// <summary>
    /// The waiting half of <see cref="ReceiveAsync"/>, entered with the lock held and leaving it
    /// released: the inline receiver when it is free, else a queued waiter. Kept out of line so that
    /// the synchronous path stays small.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private Job<T> WaitToReceiveLocked(CancellationToken cancellationToken)
    {
        if (!cancellationToken.CanBeCanceled && TryTakeInlineReceiverLocked(out short token))
        {
            _lock.Exit();
            return new Job<T>(this, token);
        }

        ReceiveWaiter<T> waiter = QueuedWaiter<T, T>.Rent<ReceiveWaiter<T>>(this, cancellationToken);
        _receivers.Enqueue(waiter);
        _lock.Exit();
        waiter.ArmCancellation();
        return waiter.Job;
    }

    /// <summary>
    /// Receives an item the Go way (<c>v, ok := &lt;-ch</c>): like <see cref="ReceiveAsync"/>, but a
    /// channel that was closed cleanly and is drained yields <c>Ok = false</c> instead of throwing.
    /// </summary>
    /// <param name="cancellationToken">Cancels a waiting receive (see <see cref="ReceiveAsync"/>).</param>
    /// <returns>A job with <c>(item, true)</c>, or <c>(default, false)</c> once closed and drained. If the
    /// channel was closed with an error, the job throws that error once drained.</returns>
    public Job<ReceiveResult<T>> ReceiveOkAsync(CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled<ReceiveResult<T>>(cancellationToken);
        }

        return ReceiveOrQueue<ReceiveOkWaiter<T>, ReceiveResult<T>>(cancellationToken, out T item, out ReceiveOkWaiter<T>? waiter) switch
        {
            Status.Done => new ReceiveResult<T>(item),
            Status.WouldBlock => waiter!.Job,
            _ => CloseError is { } error ? Job.FromException<ReceiveResult<T>>(error) : new Job<ReceiveResult<T>>(default(ReceiveResult<T>)),
        };
    }

    /// <summary>
    /// The receive of <see cref="ReceiveOkAsync"/> (<see cref="ReceiveAsync"/> has its own, which can
    /// also use the inline receiver): takes an item (and
    /// completes the sender it came from, after the lock), or queues <paramref name="waiter"/>, or
    /// reports the channel closed and drained.
    /// </summary>
    /// <remarks>Inlined into its caller: there the waiter type is exact, so the JIT needs no
    /// generic-dictionary lookups to rent and type-check it.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private Status ReceiveOrQueue<TWaiter, TResult>(CancellationToken cancellationToken, out T item, out TWaiter? waiter)
        where TWaiter : QueuedWaiter<T, TResult>, new()
    {
        _lock.Enter();
        Status status = TryReceiveLocked(out item, out IWaiter<T>? sender);
        if (status == Status.WouldBlock)
        {
            waiter = QueuedWaiter<T, TResult>.Rent<TWaiter>(this, cancellationToken);
            _receivers.Enqueue(waiter);
            _lock.Exit();
            waiter.ArmCancellation();
            return status;
        }

        _lock.Exit();
        waiter = null;
        if (sender is not null)
        {
            Wake(sender, default!);
        }

        AfterReceive();
        return status;
    }

    /// <summary>
    /// Sends without waiting: succeeds if a receiver is waiting or buffer space is free (Go's
    /// <c>select { case ch &lt;- v: default: }</c>).
    /// </summary>
    /// <returns>True if the item was handed over or buffered; false if the send would have to wait.</returns>
    /// <exception cref="ChannelClosedException">The channel is closed (a send on a closed channel is a
    /// program error, as in Go).</exception>
    public bool TrySend(T item)
    {
        _lock.Enter();
        Status status = TrySendLocked(item, out IWaiter<T>? receiver);
        _lock.Exit();
        if (status == Status.Closed)
        {
            throw ChanErrors.ForSend(CloseError);
        }

        if (receiver is not null)
        {
            Wake(receiver, item);
        }

        return status == Status.Done;
    }

    /// <summary>Receives without waiting: succeeds if an item is buffered or a sender is waiting.</summary>
    /// <param name="item">The item received, or the default value.</param>
    /// <returns>True if an item was received; false if none was available, or the channel is closed
    /// and drained (tell the two apart with <see cref="IsCompleted"/>).</returns>
    public bool TryReceive([MaybeNullWhen(false)] out T item)
    {
        _lock.Enter();
        Status status = TryReceiveLocked(out item, out IWaiter<T>? sender);
        _lock.Exit();
        if (sender is not null)
        {
            Wake(sender, default!);
        }

        AfterReceive();
        return status == Status.Done;
    }

    /// <summary>
    /// After a receive that did not wait, outside the lock: on a closed channel it may have taken the
    /// last item, and a reader view's <c>Completion</c> completes now, whichever API drained the
    /// channel (a BCL reader's completes when its channel empties, not at its next call). One load
    /// on every receive; the view is looked up only once the channel is closed. No notification is
    /// lost to a racing close: the close either came before this receive's locked section (and this
    /// load sees it) or after it (and the close notifies the view itself, the item already gone).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void AfterReceive()
    {
        if (Volatile.Read(ref _closed) is not null)
        {
            OnClosedForBridge();
        }
    }
}
