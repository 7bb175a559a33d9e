using Myriad.Coordination;

namespace Myriad.Channels;

// Giving an item back: the item was handed to a receive whose job was then abandoned instead of
// resumed (its runtime's disposal finished between the hand-off's claim and the job's resume; see
// JobCell.ConsumerCannotRun for the claim-time check that keeps this window small). The item is the
// oldest the channel handed out, so it goes back to the front:
// 1. to a waiting receiver that can run (the claim-time check skips others), else
// 2. to the front of the buffer if it has room, else
// 3. into a sender waiter at the front of the senders' queue that nobody awaits (the item waits
//    there as any sent item does; an unbuffered channel has no other place for it).
// Once the channel is closed, only step 2 can keep it: the item is dropped if the buffer has no
// room (or there is no buffer), as the item of a send still waiting at the close is (TryGiveBack
// leaves it to its caller instead).
public sealed partial class Chan<T>
{
    /// <summary>Returns an item handed to a job that will never consume it (see above).</summary>
    internal void GiveBack(T item) => TryGiveBack(item);

    /// <summary>
    /// <see cref="GiveBack"/> that tells whether the channel took the item back: false, with the item
    /// left to the caller, where <see cref="GiveBack"/> drops it (closed, and no room in the buffer).
    /// </summary>
    /// <param name="item">The item.</param>
    /// <param name="onlyIfOpen">True: refuse (return false) once the channel is closed, even with room
    /// in the buffer, so the caller keeps the item where its own readers look.</param>
    internal bool TryGiveBack(T item, bool onlyIfOpen = false)
    {
        IWaiter<T>? receiver = null;
        bool kept = true;
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
            else if (_closed is null)
            {
                _senders.EnqueueFront(SendWaiter<T>.Rent(item, this, default));
            }
            else
            {
                kept = false;
            }
        }

        _lock.Exit();
        receiver?.Complete(item);
        return kept;
    }
}
