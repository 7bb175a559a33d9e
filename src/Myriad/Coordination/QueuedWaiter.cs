using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Coordination;

/// <summary>
/// The common waiter of channels and coordination primitives: at once the queue node
/// (<see cref="IWaiter{T}"/>) and the completion cell the caller awaits, so a suspended operation
/// costs one object, taken from a pool in steady state.
/// </summary>
/// <typeparam name="TSelf">The concrete waiter (its pool).</typeparam>
/// <typeparam name="TItem">What flows through the host's queue (a channel's element type).</typeparam>
/// <typeparam name="TResult">What the awaiting caller gets.</typeparam>
/// <remarks>
/// <para><b>Two kinds, never mixed</b> (the project rule: a poolable operation is never also cancelable):</para>
/// <list type="bullet">
/// <item>Plain (no token that can fire): rented from a pool; only the host ever finishes it, always
/// under the host's lock, so <see cref="TryClaim"/> needs no atomic. Returned to its pool when the
/// awaiter consumes the result.</item>
/// <item>Cancelable: a fresh object, never pooled, with a <see cref="CancelState"/>. Its host and its
/// token race to finish it through <c>_claim</c> (0 waiting, 1 claimed). A callback that runs after the
/// waiter was consumed finds the claim taken and the cell's token invalidated, and does nothing.</item>
/// </list>
/// <para><b>Cancellation protocol.</b>
/// 1. The waiter is created cancelable (its <see cref="CancelState"/> set) before the host queues it,
///    so the host claims it with the atomic exchange from the start.
/// 2. After the host's lock is released, <see cref="ArmCancellation"/> registers the callback (it may
///    run at once, synchronously, if the token fired meanwhile; no lock is held then).
/// 3. The callback claims the waiter; if it wins, it asks the host to unlink it (under the host's lock)
///    and completes it with <see cref="OperationCanceledException"/>. If the host won, the host has
///    already unlinked it and delivers: the item is delivered exactly once, or not taken at all.
/// 4. Consuming the result unregisters the callback, so a long-lived token does not accumulate
///    registrations of completed operations.</para>
/// </remarks>
internal abstract class QueuedWaiter<TSelf, TItem, TResult> : JobBox<TResult>, IWaiter<TItem>
    where TSelf : QueuedWaiter<TSelf, TItem, TResult>, new()
{
    private static readonly Action<object?> s_onCanceled = static s => ((TSelf)s!).OnCanceled();

    private IWaiter<TItem>? _next;
    private IWaiter<TItem>? _prev;
    private TItem _item = default!;
    private CancelState? _cancel;
    private int _claim;

    /// <summary>
    /// A waiter for one operation: pooled when <paramref name="cancellationToken"/> cannot fire, fresh
    /// (and cancelable through <paramref name="host"/>) when it can.
    /// </summary>
    internal static TSelf Rent(TItem item, IWaiterHost<TItem> host, CancellationToken cancellationToken)
    {
        TSelf waiter;
        if (cancellationToken.CanBeCanceled)
        {
            waiter = new TSelf();
            waiter._cancel = new CancelState(host, cancellationToken);
        }
        else
        {
            waiter = BoxPool<TSelf>.Rent() ?? new TSelf();
        }

        waiter._item = item;
        return waiter;
    }

    IWaiter<TItem>? IWaiter<TItem>.Next
    {
        get => _next;
        set => _next = value;
    }

    IWaiter<TItem>? IWaiter<TItem>.Prev
    {
        get => _prev;
        set => _prev = value;
    }

    /// <inheritdoc/>
    public abstract bool IsSender { get; }

    /// <inheritdoc/>
    public TItem Item => _item;

    /// <summary>Whether this waiter is the cancelable (never pooled) kind.</summary>
    internal bool IsCancelable => _cancel is not null;

    /// <summary>The handle the waiting caller awaits.</summary>
    internal Job<TResult> Job => new(this, Version);

    /// <inheritdoc/>
    public bool TryClaim() => _cancel is null || Interlocked.Exchange(ref _claim, 1) == 0;

    /// <inheritdoc/>
    public abstract void Complete(TItem item);

    /// <inheritdoc/>
    public abstract void CompleteClosed(Exception? error);

    /// <summary>Step 2 of the cancellation protocol: call after the host's lock is released.</summary>
    internal void ArmCancellation()
    {
        if (_cancel is { } cancel)
        {
            cancel.Registration = cancel.Token.UnsafeRegister(s_onCanceled, this);
        }
    }

    /// <summary>Step 3.</summary>
    private void OnCanceled()
    {
        CancelState cancel = _cancel!;
        if (Interlocked.Exchange(ref _claim, 1) == 0)
        {
            cancel.Host.RemoveWaiter(this);
            TrySetException(new OperationCanceledException(cancel.Token));
        }
    }

    /// <summary>Clears the derived type's own fields before the waiter goes back to its pool.</summary>
    private protected virtual void ResetForPool()
    {
    }

    private protected sealed override void Release()
    {
        if (_cancel is { } cancel)
        {
            // Step 4. Not pooled: a callback still running finds the claim taken; the outcome stays.
            cancel.Registration.Unregister();
            InvalidateTokens();
            return;
        }

        _item = default!;
        ResetForPool();
        ResetBox();
        BoxPool<TSelf>.Return((TSelf)this);
    }

    /// <summary>What a cancelable waiter needs beyond a pooled one (kept out of line: most waiters are pooled).</summary>
    private sealed class CancelState(IWaiterHost<TItem> host, CancellationToken token)
    {
        internal readonly IWaiterHost<TItem> Host = host;
        internal readonly CancellationToken Token = token;
        internal CancellationTokenRegistration Registration;
    }
}
