using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Myriad.Channels;

/// <summary>
/// How a select holds the locks of all its channels at once without a lock-order deadlock, and
/// without a lock-order field in every channel (a million channels is the workload they are sized for).
/// </summary>
/// <remarks>
/// <para><b>Order.</b> A channel's lock key is its identity hash code
/// (<see cref="RuntimeHelpers.GetHashCode(object)"/>): stable for the object's lifetime and kept in the
/// object header, so it costs the channel no field. It is not unique: the runtime keeps 26 bits, so
/// among some thousands of channels two often share a key. Channels with equal keys have no order
/// between them, and only try-locks are used inside such a group.</para>
/// <para><b>Protocol</b> (<see cref="LockAll"/>):
/// 1. Sort the cases by key.
/// 2. Walk them in that order. A case on a channel already locked by this walk (two cases on one
///    channel) is skipped.
/// 3. The first channel of each key group is locked with a waiting <c>Enter</c>; every other channel of
///    the same group (a different channel with the same key) only with <c>TryEnter</c>.
/// 4. If a <c>TryEnter</c> fails, release every lock taken so far, move the channel that was busy to
///    the front of its key group (so that the next attempt waits for it with <c>Enter</c> instead of
///    trying it again), back off (spin, then yield: <see cref="SpinWait"/>), and start again at step 2.
/// Why it cannot deadlock: a select waits only in step 3's <c>Enter</c>, and only while every lock it
/// holds has a strictly smaller key than the one it waits for (reordering inside a group of equal keys
/// keeps that true). A cycle of waiting selects would need keys that strictly increase all around the
/// cycle, which is impossible. A channel operation other than select holds one channel lock at a time
/// and never waits while holding it.
/// Step 4 runs only for a select that names two different channels with the same key (for a given
/// pair of channels a one-in-67-million chance) when the second of them is busy, held by any
/// operation on it, even briefly. Because the next attempt waits for exactly that channel, a select
/// retries at most once per busy channel it meets rather than in lockstep with another select.</para>
/// </remarks>
internal sealed partial class SelectOperation
{
    /// <summary>A case's place in the lock order: its channel's identity hash code.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int LockKey(SelectCase c) => RuntimeHelpers.GetHashCode(c.Channel);

    /// <summary>Step 1: insertion sort of case indices by lock key (selects are small).</summary>
    private static void SortByLockKey(ReadOnlySpan<int> keys, Span<int> order)
    {
        for (int i = 0; i < order.Length; i++)
        {
            int key = keys[i];
            int j = i - 1;
            while (j >= 0 && keys[order[j]] > key)
            {
                order[j + 1] = order[j];
                j--;
            }

            order[j + 1] = i;
        }
    }

    /// <summary>
    /// Steps 2 to 4: locks each distinct channel once. Writes the indices of the cases whose locks it
    /// took into <paramref name="held"/> (for <see cref="UnlockAll"/>) and returns how many there are.
    /// </summary>
    private static int LockAll(CaseSlot[] slots, ReadOnlySpan<int> keys, Span<int> order, Span<int> held)
    {
        SpinWait backOff = default;
        while (true)
        {
            int count = 0;
            int groupHeld = 0; // index into held of the first lock of the current key group
            int groupOrder = 0; // index into order of the first case of the current key group
            int busy = -1; // index into order of a case whose channel was busy (step 4)
            for (int k = 0; k < order.Length; k++)
            {
                int i = order[k];
                SelectCase c = slots[i].Case!;
                if (k == 0 || keys[i] != keys[order[k - 1]])
                {
                    // Step 3, first channel of a key group: every lock held has a smaller key.
                    groupHeld = count;
                    groupOrder = k;
                    c.EnterLock();
                    held[count++] = i;
                    continue;
                }

                if (IsHeldInGroup(slots, c.Channel, held[groupHeld..count]))
                {
                    continue; // step 2: the same channel as an earlier case
                }

                if (!c.TryEnterLock())
                {
                    busy = k;
                    break;
                }

                held[count++] = i;
            }

            if (busy < 0)
            {
                return count;
            }

            // Step 4. Swapping inside a group of equal keys keeps the order sorted.
            UnlockAll(slots, held[..count]);
            (order[groupOrder], order[busy]) = (order[busy], order[groupOrder]);
            backOff.SpinOnce(sleep1Threshold: -1);
        }
    }

    private static bool IsHeldInGroup(CaseSlot[] slots, object channel, ReadOnlySpan<int> group)
    {
        foreach (int i in group)
        {
            if (ReferenceEquals(slots[i].Case!.Channel, channel))
            {
                return true;
            }
        }

        return false;
    }

    private static void UnlockAll(CaseSlot[] slots, ReadOnlySpan<int> held)
    {
        foreach (int i in held)
        {
            slots[i].Case!.ExitLock();
        }
    }
}
