using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Coordination;

/// <summary>
/// The common waiter of channels and coordination primitives: at once the queue node
/// (<see cref="IWaiter{T}"/>) and the completion cell the caller awaits, so a suspended operation
/// costs one object, taken from a pool in steady state.
/// </summary>
/// <typeparam name="TItem">What flows through the host's queue (a channel's element type).</typeparam>
/// <typeparam name="TResult">What the awaiting caller gets.</typeparam>
/// <remarks>
/// <para><b>Two kinds, never mixed</b> (the project rule: a poolable operation is never also cancelable):</para>
/// <list type="bullet">
/// <item>Plain (no token that can fire): recycled; only the host ever finishes it, always under the
/// host's lock, so <see cref="TryClaim"/> needs no atomic. When the awaiter consumes the result it goes
/// back to its host's spare slot when the host keeps one (<see cref="SpareWaiter"/>: the next wait on the same host takes it
/// without touching a thread-local pool), or to its pool when that slot is taken.</item>
/// <item>Cancelable: a fresh object, never pooled, with a <see cref="WaiterCancelState"/>. Its host and its
/// token race to finish it through the state's claim flag (0 waiting, 1 claimed). A callback that runs after the
/// waiter was consumed finds the claim taken and the cell's token invalidated, and does nothing.</item>
/// </list>
/// <para><b>Cancellation protocol.</b>
/// 1. The waiter is created cancelable (its <see cref="WaiterCancelState"/> set) before the host queues it,
///    so the host claims it with the atomic exchange from the start.
/// 2. After the host's lock is released, <see cref="ArmCancellation"/> registers the callback (it may
///    run at once, synchronously, if the token fired meanwhile; no lock is held then).
/// 3. The callback claims the waiter; if it wins, it asks the host to unlink it (under the host's lock)
///    and completes it with <see cref="OperationCanceledException"/>. If the host won, the host has
///    already unlinked it and delivers: the item is delivered exactly once, or not taken at all.
/// 4. Consuming the result unregisters the callback, so a long-lived token does not accumulate
///    registrations of completed operations.</para>
/// <para><b>No self type parameter.</b> The base is generic over the item and result types only, so
/// that for value-type elements (the common hot case) its methods are compiled for the exact types:
/// type tests and pool accesses need no generic-dictionary lookups on the per-hop path. The concrete
/// type appears only in <see cref="Rent"/>, which is inlined into call sites that know it.</para>
/// </remarks>
internal abstract class QueuedWaiter<TItem, TResult> : SourceBox<TResult>, IWaiter<TItem>
{
    private static readonly Action<object?> s_onCanceled = static s => ((QueuedWaiter<TItem, TResult>)s!).OnCanceled();

    private IWaiter<TItem>? _next;
    private IWaiter<TItem>? _prev;
    private bool _inHostQueue;

    // A sender's, a receiver's or a releaser's call completes this waiter: plain code awaiting it
    // must not run inside that call (see JobCell.ResumesForeignWaitersAsynchronously).
    private protected override bool ResumesForeignWaitersAsynchronously => true;

    /// <summary>
    /// One field for two kinds (a waiter is pooled or cancelable, never both, and a million pending
    /// waiters is the workload this is sized for): the host a recycled waiter returns to, or the
    /// <see cref="WaiterCancelState"/> of a cancelable one. Null for a pooled waiter in its pool.
    /// </summary>
    private object? _owner;

    /// <summary>
    /// A <typeparamref name="TWaiter"/> for one operation, under <paramref name="host"/>'s lock:
    /// recycled when <paramref name="cancellationToken"/> cannot fire, fresh (and cancelable) when it can.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static TWaiter Rent<TWaiter>(IWaiterHost<TItem> host, CancellationToken cancellationToken)
        where TWaiter : QueuedWaiter<TItem, TResult>, new()
    {
        TWaiter waiter;
        if (cancellationToken.CanBeCanceled)
        {
            waiter = new TWaiter();
            waiter._owner = new WaiterCancelState(host, cancellationToken);
        }
        else
        {
            waiter = host.Spare.TakeLocked<TWaiter>() ?? BoxPool<TWaiter>.Shared.Rent() ?? new TWaiter();
            waiter._owner = host;
        }

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

    // A release write: a pooled waiter reused by another host is marked queued there only after what
    // its last consumer wrote before releasing it (see Chan{T}.TryWithdrawReceiver, which reads it first).
    bool IWaiter<TItem>.InHostQueue
    {
        get => _inHostQueue;
        set => Volatile.Write(ref _inHostQueue, value);
    }

    /// <summary>
    /// <see cref="IWaiter{T}.InHostQueue"/> read with acquire semantics, for a thread that holds a host's
    /// lock but may be looking at a waiter another host's lock guards (see Chan{T}.TryWithdrawReceiver).
    /// </summary>
    internal bool InHostQueueAcquire => Volatile.Read(ref _inHostQueue);

    /// <inheritdoc/>
    public abstract bool IsSender { get; }

    /// <inheritdoc/>
    public abstract TItem Item { get; }

    /// <summary>The host this waiter waits in (either kind); null only for a pooled waiter in its pool.</summary>
    private protected object? Host => _owner is WaiterCancelState cancel ? cancel.Host : _owner;

    /// <summary>The handle the waiting caller awaits.</summary>
    internal Job<TResult> Job => new(this, Version);

    /// <inheritdoc/>
    /// <remarks>A waiter whose job's runtime can no longer run it is claimed and canceled here, and
    /// reported as not claimable, so the host skips it like a canceled one (see
    /// <see cref="JobCell.ConsumerCannotRun"/>).</remarks>
    public bool TryClaim()
    {
        if (_owner is WaiterCancelState cancel && !cancel.TryClaim())
        {
            return false;
        }

        if (ConsumerCannotRun())
        {
            CancelConsumerLater();
            return false;
        }

        return true;
    }

    /// <inheritdoc/>
    public abstract void Complete(TItem item);

    /// <inheritdoc/>
    public abstract void CompleteClosed(Exception? error);

    /// <summary>Step 2 of the cancellation protocol: call after the host's lock is released.</summary>
    internal void ArmCancellation()
    {
        if (_owner is WaiterCancelState cancel)
        {
            cancel.Registration = cancel.Token.UnsafeRegister(s_onCanceled, this);
        }
    }

    /// <summary>Step 3.</summary>
    private void OnCanceled()
    {
        var cancel = (WaiterCancelState)_owner!;
        if (cancel.TryClaim())
        {
            ((IWaiterHost<TItem>)cancel.Host).RemoveWaiter(this);
            TrySetException(ThrowHelper.Canceled(cancel.Token));
        }
    }

    /// <summary>Clears the derived type's own fields before the waiter goes back to its pool.</summary>
    private protected virtual void ResetForPool()
    {
    }

    /// <summary>Returns this (reset) waiter to its concrete type's pool.</summary>
    private protected abstract void ReturnToPool();

    private protected sealed override void Release()
    {
        if (_owner is WaiterCancelState cancel)
        {
            // Step 4. Not pooled: a callback still running finds the claim taken; the outcome stays.
            cancel.Registration.Unregister();
            InvalidateTokens();
            return;
        }

        ResetForPool();
        ResetBox();
        IWaiterHost<TItem> home = Unsafe.As<IWaiterHost<TItem>>(_owner!); // a plain waiter's owner is its host
        if (!home.Spare.TryKeep(this))
        {
            _owner = null; // a pooled waiter must not keep its last host alive
            ReturnToPool();
        }
    }
}

/// <summary>
/// What a cancelable waiter needs beyond a pooled one, kept out of line (most waiters are pooled) and
/// not nested in the generic waiter, so that testing for it is an exact, lookup-free type test.
/// </summary>
internal sealed class WaiterCancelState(object host, CancellationToken token)
{
    /// <summary>The <see cref="IWaiterHost{T}"/> to unlink the waiter from.</summary>
    internal readonly object Host = host;
    internal readonly CancellationToken Token = token;
    internal CancellationTokenRegistration Registration;

    /// <summary>The race between the host and the token: 0 waiting, 1 claimed.</summary>
    private int _claim;

    internal bool TryClaim() => Interlocked.Exchange(ref _claim, 1) == 0;
}
