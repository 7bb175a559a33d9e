using System;
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

        if (_caseCount > 0 ? PollOrEnqueue() : TryResolveDefault())
        {
            return job;
        }

        Arm();
        return job;
    }

    /// <summary>Steps 1 to 4 with the channel locks held throughout; true if the select resolved.</summary>
    private bool PollOrEnqueue()
    {
        int n = _caseCount;
        SelectCase?[] cases = _cases;
        Span<int> pollOrder = n <= ChanDefaults.SelectStackCases ? stackalloc int[n] : new int[n];
        Span<int> lockOrder = n <= ChanDefaults.SelectStackCases ? stackalloc int[n] : new int[n];

        // Step 1: a uniform random permutation (inside-out Fisher-Yates) and the lock order.
        for (int i = 0; i < n; i++)
        {
            int j = Random.Shared.Next(i + 1);
            pollOrder[i] = pollOrder[j];
            pollOrder[j] = i;
        }

        SortByLockId(cases, lockOrder);
        LockAll(cases, lockOrder);

        foreach (int i in pollOrder)
        {
            SelectCase c = cases[i]!;
            if (c.TryPerformLocked())
            {
                // Step 2.
                _committed = 1;
                _winner = c.Index;
                UnlockAll(cases, lockOrder);
                c.FinishPerform();
                return true;
            }
        }

        if (_defaultIndex >= 0)
        {
            // Step 3.
            UnlockAll(cases, lockOrder);
            return TryResolveDefault();
        }

        // Step 4.
        for (int i = 0; i < n; i++)
        {
            cases[i]!.EnqueueLocked();
        }

        _enqueued = true;
        UnlockAll(cases, lockOrder);
        return false;
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
    private static void SortByLockId(SelectCase?[] cases, Span<int> order)
    {
        for (int i = 0; i < order.Length; i++)
        {
            int current = i;
            long id = cases[i]!.LockId;
            int j = i - 1;
            while (j >= 0 && cases[order[j]]!.LockId > id)
            {
                order[j + 1] = order[j];
                j--;
            }

            order[j + 1] = current;
        }
    }

    /// <summary>Locks each distinct channel once, in lock-id order (equal ids are the same channel).</summary>
    private static void LockAll(SelectCase?[] cases, Span<int> order)
    {
        long previous = 0;
        foreach (int i in order)
        {
            SelectCase c = cases[i]!;
            long id = c.LockId;
            if (id != previous)
            {
                c.EnterLock();
                previous = id;
            }
        }
    }

    private static void UnlockAll(SelectCase?[] cases, Span<int> order)
    {
        long previous = 0;
        foreach (int i in order)
        {
            SelectCase c = cases[i]!;
            long id = c.LockId;
            if (id != previous)
            {
                c.ExitLock();
                previous = id;
            }
        }
    }
}
