using System.Runtime.CompilerServices;
using Myriad.Coordination;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Channels;

// Waking a counterpart: inline or handed to the worker's run-next slot.
//
// Completing a waiter resumes its job through the trampoline, inline on this thread while the stack
// is shallow. That is the fastest hop when the waker is about to wait itself (ping-pong, a chain of
// unbuffered stages): the woken job runs at once on a hot cache and the waker's own wait follows.
// It is the slowest shape for a buffered channel under load: a receive that frees one slot of a full
// buffer wakes a producer, the producer runs inline, sends one item, finds the buffer full again and
// waits again, and every item costs a full suspend and resume of a producer (and symmetrically, a
// send into an empty buffer with parked consumers resumes one consumer per item).
//
// Go's answer (hchan plus the scheduler): the woken goroutine goes to the P's runnext slot and the
// waker keeps running, so a consumer drains the whole buffer before the producers it readied run and
// refill it: the switches are amortized over a buffer's worth of items. A buffered channel here does
// the same: the wake of a counterpart is deferred to the current worker's run-next slot (the
// trampoline's deferral path: the woken job runs when this one suspends, or on another worker that
// steals it). An unbuffered channel keeps the inline hand-off, which is its fast path.
//
// An unbounded channel defers too. Handed over inline, a consumer that kept up ran for one item on
// the producer's thread at every send and waited again, so nothing was ever queued for another
// worker to steal: a fan-out or a pipeline over unbounded channels ran serially on one core (0.4-0.6x
// the BCL's unbounded channels, whose default also resumes a waiting reader elsewhere). Deferred, the
// consumer is stolen by an idle worker and drains the buffer beside the producer. The price is the
// one an unbounded buffer always has: its senders never wait, so while a producer runs without
// suspending on a one-worker runtime (or with every other worker busy), the consumer waits in the
// run-next slot and the buffer grows; the producer's next suspension, or the watchdog's stall check,
// lets it run.
//
// Hazards.
// - Deferral is only used on a MultiThreadRuntime worker thread, whose loop always drains its
//   run-next slot. On any other thread (a plain thread, a spare worker, a single-threaded runtime)
//   the wake stays inline, exactly as before.
// - The trampoline depth is raised to its limit only around the one completion; the waiter's own
//   completion code runs no user code, so nothing else sees the raised depth, and the previous depth
//   is restored even if the completion throws.
public sealed partial class Chan<T>
{
    /// <summary>Completes a claimed counterpart: deferred on a worker for a buffered channel, inline otherwise.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Wake(IWaiter<T> waiter, T item)
    {
        if (_buffer is null)
        {
            waiter.Complete(item);
        }
        else
        {
            WakeDeferred(waiter, item);
        }
    }

    /// <summary>The buffered case of <see cref="Wake"/>.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void WakeDeferred(IWaiter<T> waiter, T item)
    {
        PerThread state = PerThread.Current;
        int depth = state.Depth;
        if (depth == 0 || state.Context is not Worker)
        {
            waiter.Complete(item);
            return;
        }

        state.Depth = MyriadDefaults.MaxInlineDepth;
        try
        {
            waiter.Complete(item);
        }
        finally
        {
            state.Depth = depth;
        }
    }
}
