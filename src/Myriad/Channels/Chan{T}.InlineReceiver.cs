using System;
using System.Diagnostics;
using System.Threading;
using Myriad.Coordination;
using Myriad.Jobs;

namespace Myriad.Channels;

// The inline receiver: a channel is also the completion cell (a JobBox<T>) of one
// waiting ReceiveAsync, so the commonest wait (one job receiving from a channel
// nobody else reads) allocates no waiter at all, pooled or not. In a chain of a million jobs, each
// blocked on its own channel, that is a million objects fewer alive at once (Go's runtime makes the
// same saving by parking the goroutine's own sudog in the channel). The price: every channel carries
// the cell's fields (continuation, aux, version, a result slot, the state), about 32 bytes, whether
// or not a receive ever waits on it.
//
// States of _inline (transitions to Waiting and Busy under the channel's lock):
// Free: the cell is reset and unused; its version is the token of the next use.
// Waiting: a receive holds a job over this cell and waits. Set by a receive that would
// block, has no cancelable token, and finds _receivers empty (so it is the oldest waiting
// receiver: invariant 5 of Chan<T>).
// Busy: a send (or Close) claimed it; the completion follows after the
// lock, then the receiver consumes the outcome. Also the end state of a receive whose job's
// runtime can no longer run it: the claimer cancels it instead of handing it an item, and
// nobody consumes that outcome.
//
// Protocol.
// 1. The receive, under the lock, moves Free to Waiting and hands out a job with the cell's version.
// 2. A send, under the lock, moves Waiting to Busy, releases the lock, then completes the cell with
//    its item (the cell's own completion protocol wakes the receiver through the trampoline).
//    Close does the same with the close outcome.
// 3. The receiver consumes the outcome (GetResult), which releases the cell:
//    it is reset (version incremented, so the old job handle goes stale) and only then published
//    as Free, with a release store and without the lock: a receive that still sees Busy simply
//    queues a pooled waiter instead, which is always correct.
// Cancelable receives, ReceiveOkAsync and select cases always use queued waiters;
// a cell that can be canceled could not be reused safely, and a poolable operation is never also
// cancelable.
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

    /// <summary>Step 2, under the lock: claims a Waiting inline receiver for a send or for Close.</summary>
    private bool TryClaimInlineReceiverLocked()
    {
        Debug.Assert(_lock.IsHeld, "caller holds the lock");
        if (_inline != InlineWaiting)
        {
            return false;
        }

        _inline = InlineBusy;
        if (ConsumerCannotRun())
        {
            // Its job's runtime will never run it: canceled, as a queued receive's waiter would be
            // (see JobCell.ConsumerCannotRun). Nobody consumes the outcome, so the cell stays Busy and
            // later receives queue pooled waiters, which is always correct.
            CancelConsumerLater();
            return false;
        }

        return true;
    }

    /// <summary>Step 3: the receiver consumed the outcome.</summary>
    private protected override void Release()
    {
        ResetBox();
        Volatile.Write(ref _inline, InlineFree);
    }

    internal override string Describe() => $"Chan<{Diagnostics.CompilerNames.DescribeType(typeof(T))}>.ReceiveAsync";

    // A sender's call completes the inline receiver: plain code awaiting it must not run inside
    // that call (see JobCell.ResumesForeignWaitersAsynchronously).
    private protected override bool ResumesForeignWaitersAsynchronously => true;

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

    bool IWaiter<T>.InHostQueue
    {
        get => false;
        set => Debug.Fail("the inline receiver is never queued");
    }

    bool IWaiter<T>.IsSender => false;

    T IWaiter<T>.Item => default!;

    bool IWaiter<T>.TryClaim() => true;

    void IWaiter<T>.Complete(T item) => TrySetResult(item);

    void IWaiter<T>.CompleteClosed(Exception? error) => TrySetException(error ?? ChanErrors.ForReceive());

    /// <summary>The inline receiver's item was handed to a job that was abandoned: it goes back.</summary>
    internal override void GiveBackUnconsumed()
    {
        if (ErrorUnchecked is null)
        {
            GiveBack(GetResult(Version)); // consuming frees the inline receiver for the next receive
        }
    }
}
