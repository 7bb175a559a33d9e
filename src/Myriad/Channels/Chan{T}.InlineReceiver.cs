using System;
using System.Diagnostics;
using System.Threading;
using Myriad.Coordination;
using Myriad.Jobs;

namespace Myriad.Channels;

/// <summary>
/// The inline receiver: a channel is also the completion cell (a <see cref="JobBox{T}"/>) of one
/// waiting <see cref="ReceiveAsync"/>, so the commonest wait (one job receiving from a channel
/// nobody else reads) allocates no waiter at all, pooled or not. In a chain of a million jobs, each
/// blocked on its own channel, that is a million objects fewer alive at once (Go's runtime makes the
/// same saving by parking the goroutine's own <c>sudog</c> in the channel).
/// </summary>
/// <remarks>
/// <para><b>States of <c>_inline</c></b> (transitions to Waiting and Busy under the channel's lock):</para>
/// <list type="bullet">
/// <item><c>Free</c>: the cell is reset and unused; its version is the token of the next use.</item>
/// <item><c>Waiting</c>: a receive holds a job over this cell and waits. Set by a receive that would
/// block, has no cancelable token, and finds <c>_receivers</c> empty (so it is the oldest waiting
/// receiver: invariant 5 of <see cref="Chan{T}"/>).</item>
/// <item><c>Busy</c>: a send (or <see cref="Close"/>) claimed it; the completion follows after the
/// lock, then the receiver consumes the outcome.</item>
/// </list>
/// <para><b>Protocol.</b>
/// 1. The receive, under the lock, moves Free to Waiting and hands out a job with the cell's version.
/// 2. A send, under the lock, moves Waiting to Busy, releases the lock, then completes the cell with
///    its item (the cell's own completion protocol wakes the receiver through the trampoline).
///    <see cref="Close"/> does the same with the close outcome.
/// 3. The receiver consumes the outcome (<see cref="JobBox{T}.GetResult"/>), which releases the cell:
///    it is reset (version incremented, so the old job handle goes stale) and only then published
///    as Free, with a release store and without the lock: a receive that still sees Busy simply
///    queues a pooled waiter instead, which is always correct.</para>
/// <para>Only cancelable receives, <see cref="ReceiveOkAsync"/> and select cases use queued waiters;
/// a cell that can be canceled could not be reused safely, and a poolable operation is never also
/// cancelable.</para>
/// </remarks>
public sealed partial class Chan<T>
{
    private const int InlineFree = 0;
    private const int InlineWaiting = 1;
    private const int InlineBusy = 2;

    /// <summary>Step 1: under the lock, claims the inline receiver for a receive that must wait.</summary>
    private bool TryTakeInlineReceiverLocked(out short token)
    {
        Debug.Assert(_lock.IsHeld, "caller holds the lock");
        if (Volatile.Read(ref _inline) == InlineFree && _receivers.IsEmpty)
        {
            _inline = InlineWaiting;
            token = Version;
            return true;
        }

        token = 0;
        return false;
    }

    /// <summary>Step 3: the receiver consumed the outcome.</summary>
    private protected override void Release()
    {
        ResetBox();
        Volatile.Write(ref _inline, InlineFree);
    }

    internal override string Describe() => $"Chan<{typeof(T).Name}>.ReceiveAsync";

    // The inline receiver is never in a WaiterQueue: senders and Close claim it by its state, under
    // the lock, so the queue links and the claim are never used.
    IWaiter<T>? IWaiter<T>.Next
    {
        get => null;
        set => Debug.Fail("the inline receiver is never queued");
    }

    IWaiter<T>? IWaiter<T>.Prev
    {
        get => null;
        set => Debug.Fail("the inline receiver is never queued");
    }

    bool IWaiter<T>.IsSender => false;

    T IWaiter<T>.Item => default!;

    bool IWaiter<T>.TryClaim() => true;

    void IWaiter<T>.Complete(T item) => TrySetResult(item);

    void IWaiter<T>.CompleteClosed(Exception? error) => TrySetException(error ?? ChannelClosedException.ForReceive());
}
