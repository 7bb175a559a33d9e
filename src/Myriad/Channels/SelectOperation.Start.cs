using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Coordination;
using Myriad.Scheduling;

namespace Myriad.Channels;

internal sealed partial class SelectOperation
{
    /// <summary>Runs steps 1 to 4 of the commit protocol and returns the handle to the outcome.</summary>
    internal Job<int> Start(short token)
    {
        if (!IsBuilding(token))
        {
            throw SelectBuilder.StaleBuilder();
        }

        if (_totalCount == 0)
        {
            throw SelectBuilder.NoCases(); // only WithCancellation was called
        }

        _started = true;
        var job = new Job<int>(this, Version);
        if (_cancellationToken.IsCancellationRequested)
        {
            _committed = 1;
            TrySetException(new OperationCanceledException(_cancellationToken));
            return job;
        }

        if (_caseCount == 0)
        {
            if (!TryResolveDefault())
            {
                Arm();
            }

            return job;
        }

        int outcome = PollOrEnqueue();
        if (outcome >= 0)
        {
            // End of step 2, out of PollOrEnqueue's frame: completing the counterpart may run its
            // job inline, and that job may select in turn; the scratch spans need not stay on the stack.
            _slots[outcome].Case!.FinishPerform();
        }
        else if (outcome == Enqueued)
        {
            Arm();
        }

        return job;
    }

    /// <summary>What <see cref="PollOrEnqueue"/> returns when the default case fired.</summary>
    private const int ResolvedByDefault = -1;

    /// <summary>What <see cref="PollOrEnqueue"/> returns when the cases were queued (step 4).</summary>
    private const int Enqueued = -2;

    /// <summary>
    /// Steps 1 to 4 with the channel locks held throughout. Returns the slot of the case performed in
    /// step 2 (its counterpart and the cell still to be completed by the caller), or
    /// <see cref="ResolvedByDefault"/>, or <see cref="Enqueued"/>.
    /// </summary>
    /// <remarks>The scratch spans are written before they are read, so the stack need not be zeroed.</remarks>
    [SkipLocalsInit]
    private int PollOrEnqueue()
    {
        int n = _caseCount;
        CaseSlot[] slots = _slots;
        bool onStack = n <= ChanDefaults.SelectStackCases;
        Span<int> pollOrder = onStack ? stackalloc int[n] : new int[n];
        Span<int> lockOrder = onStack ? stackalloc int[n] : new int[n];
        Span<long> lockIds = onStack ? stackalloc long[n] : new long[n];

        // Step 1: a uniform random permutation (inside-out Fisher-Yates) and the lock order.
        for (int i = 0; i < n; i++)
        {
            int j = SelectRandom.Next(i + 1);
            pollOrder[i] = pollOrder[j];
            pollOrder[j] = i;
            lockIds[i] = slots[i].Case!.LockId;
        }

        SortByLockId(lockIds, lockOrder);
        LockAll(slots, lockIds, lockOrder);

        foreach (int i in pollOrder)
        {
            SelectCase c = slots[i].Case!;
            if (c.TryPerformLocked())
            {
                // Step 2.
                _committed = 1;
                _winner = c.Index;
                UnlockAll(slots, lockIds, lockOrder);
                return i;
            }
        }

        if (_defaultIndex >= 0)
        {
            // Step 3.
            UnlockAll(slots, lockIds, lockOrder);
            TryResolveDefault();
            return ResolvedByDefault;
        }

        // Step 4.
        for (int i = 0; i < n; i++)
        {
            slots[i].Case!.EnqueueLocked();
        }

        _enqueued = true;
        UnlockAll(slots, lockIds, lockOrder);
        return Enqueued;
    }

    /// <summary>Step 3 (also the whole select when it has no channel case).</summary>
    private bool TryResolveDefault()
    {
        if (_defaultIndex < 0)
        {
            return false;
        }

        _committed = 1;
        _winner = _defaultIndex;
        TrySetResult(_defaultIndex);
        return true;
    }

    /// <summary>End of step 4: arm the timer and the token, outside every lock.</summary>
    private void Arm()
    {
        bool timed = _timeoutIndex >= 0 && _timeout != Timeout.InfiniteTimeSpan;
        if (!timed && !_cancellationToken.CanBeCanceled)
        {
            return;
        }

        _armed = true; // from here on this object is never pooled
        if (timed)
        {
            _timer = new TimerEntry(this);
            TimerQueue.Schedule(_timer, _timeout, SchedulerContext.Current?.Runtime);
        }

        if (_cancellationToken.CanBeCanceled)
        {
            _registration = _cancellationToken.UnsafeRegister(s_onCanceled, this);
        }
    }

    /// <summary>Insertion sort of case indices by lock id (selects are small).</summary>
    private static void SortByLockId(ReadOnlySpan<long> ids, Span<int> order)
    {
        for (int i = 0; i < order.Length; i++)
        {
            long id = ids[i];
            int j = i - 1;
            while (j >= 0 && ids[order[j]] > id)
            {
                order[j + 1] = order[j];
                j--;
            }

            order[j + 1] = i;
        }
    }

    /// <summary>Locks each distinct channel once, in lock-id order (equal ids are the same channel).</summary>
    private static void LockAll(CaseSlot[] slots, ReadOnlySpan<long> ids, ReadOnlySpan<int> order)
    {
        long previous = 0;
        foreach (int i in order)
        {
            if (ids[i] != previous)
            {
                slots[i].Case!.EnterLock();
                previous = ids[i];
            }
        }
    }

    private static void UnlockAll(CaseSlot[] slots, ReadOnlySpan<long> ids, ReadOnlySpan<int> order)
    {
        long previous = 0;
        foreach (int i in order)
        {
            if (ids[i] != previous)
            {
                slots[i].Case!.ExitLock();
                previous = ids[i];
            }
        }
    }
}
