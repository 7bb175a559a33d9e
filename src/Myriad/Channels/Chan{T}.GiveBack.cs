using System;
using Myriad.Coordination;

namespace Myriad.Channels;

// Giving an item back: the item was handed to a receive whose job was then abandoned instead of
// resumed (its runtime's disposal finished between the hand-off's claim and the job's resume; see
// JobCell.ConsumerCannotRun for the claim-time check that keeps this window small). The item is the
// oldest the channel handed out, so it goes back to the front:
// 1. to a waiting receiver that can run (the claim-time check skips others), else
// 2. to the front of the buffer if it has room, else
// 3. into a GivenBackItem at the front of the senders' queue, which nobody awaits (the item waits
//    there as any sent item does; an unbuffered channel has no other place for it).
// The send that offered the item succeeded (its TrySend returned true, its SendAsync completed), so
// the close does not drop it: receivers take a given-back item after the close as they drain the
// buffer (TryReceiveLocked looks at the senders' queue before it reports the close), and the close
// leaves such items queued while it fails the sends that still wait (invariant 3's one exception).
public sealed partial class Chan<T>
{
    /// <summary>Returns an item handed to a job that will never consume it (see above).</summary>
    internal void GiveBack(T item) => TryGiveBack(item);

    /// <summary>
    /// <see cref="GiveBack"/> that tells whether the channel took the item back: always, unless
    /// <paramref name="onlyIfOpen"/> refuses it on a closed channel (the item is then left to the caller).
    /// </summary>
    /// <param name="item">The item.</param>
    /// <param name="onlyIfOpen">True: refuse (return false) once the channel is closed, even with room
    /// in the buffer, so the caller keeps the item where its own readers look.</param>
    internal bool TryGiveBack(T item, bool onlyIfOpen = false)
    {
        IWaiter<T>? receiver = null;
        _lock.Enter();
        if (onlyIfOpen && _closed is not null)
        {
            _lock.Exit();
            return false;
        }

        if (_closed is null && TryClaimInlineReceiverLocked())
        {
            receiver = this;
        }
        else if (_closed is null)
        {
            receiver = _receivers.DequeueClaimable();
        }

        if (receiver is null)
        {
            if (_buffer is { HasRoom: true } buffer)
            {
                buffer.EnqueueFront(item);
            }
            else
            {
                _senders.EnqueueFront(new GivenBackItem<T>(item));
            }
        }

        _lock.Exit();
        receiver?.Complete(item);
        return true;
    }
}

/// <summary>
/// An item given back to a channel that has no room for it in a buffer (see above): queued with the
/// senders, taken by the next receive, awaited by nobody. Only ever touched under the channel's lock.
/// </summary>
internal sealed class GivenBackItem<T>(T item) : IWaiter<T>
{
    public IWaiter<T>? Next { get; set; }

    public IWaiter<T>? Prev { get; set; }

    public bool InHostQueue { get; set; }

    public bool IsSender => true;

    public T Item { get; } = item;

    // Dequeued once, under the channel's lock, by the receive that takes the item: nobody races it.
    public bool TryClaim() => true;

    public void Complete(T taken)
    {
        // The receive took the item: there is no sender to tell.
    }

    // The close keeps given-back items queued (see TryClose), so this is never called with one.
    public void CompleteClosed(Exception? error)
    {
    }
}
