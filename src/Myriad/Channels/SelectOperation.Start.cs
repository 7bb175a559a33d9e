using System;
using Myriad.Internal;
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

        if (_caseCount == 0 && _defaultIndex < 0 && (_timeoutIndex < 0 || _timeout == Timeout.InfiniteTimeSpan) && !_cancellationToken.CanBeCanceled)
        {
            throw SelectBuilder.WaitsForever(); // Go would block forever: every case's channel is null
        }

        _started = true;
        var job = new Job<int>(this, Version);
        if (_cancellationToken.IsCancellationRequested)
        {
            _committed = 1;
            TrySetException(ThrowHelper.Canceled(_cancellationToken));
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
    /// Steps 1 to 4: a poll one lock at a time, then, if no case was ready, a poll and the queueing with
    /// every channel lock held throughout. Returns the slot of the case performed in
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
        Span<int> lockKeys = onStack ? stackalloc int[n] : new int[n];
        Span<int> held = onStack ? stackalloc int[n] : new int[n];

        // Step 1: a uniform random permutation (inside-out Fisher-Yates) and the lock order.
        for (int i = 0; i < n; i++)
        {
            int j = SelectRandom.Next(i + 1);
            pollOrder[i] = pollOrder[j];
            pollOrder[j] = i;
        }

        if (n > 1 && PollOneLockAtATime(slots, pollOrder) is int ready and >= 0)
        {
            return ready; // step 2, without taking every lock
        }

        for (int i = 0; i < n; i++)
        {
            lockKeys[i] = LockKey(slots[i].Case!);
        }

        SortByLockKey(lockKeys, lockOrder);
        held = held[..LockAll(slots, lockKeys, lockOrder, held)];

        foreach (int i in pollOrder)
        {
            SelectCase c = slots[i].Case!;
            if (c.TryPerformLocked())
            {
                // Step 2.
                _committed = 1;
                _winner = c.Index;
                UnlockAll(slots, held);
                return i;
            }
        }

        if (_defaultIndex >= 0 || HasZeroTimeout)
        {
            // Step 3.
            UnlockAll(slots, held);
            TryResolveDefault();
            return ResolvedByDefault;
        }

        // Step 4.
        for (int i = 0; i < n; i++)
        {
            slots[i].Case!.EnqueueLocked();
        }

        _enqueued = true;
        UnlockAll(slots, held);
        return Enqueued;
    }

    /// <summary>
    /// Step 1's fast path: polls the cases in the random order, each under its own channel's lock only,
    /// and performs the first one that can complete (step 2). Returns its slot, or -1 when none could
    /// (then the caller polls again under every lock, and queues the cases if still none can).
    /// </summary>
    /// <remarks>
    /// <para>A select that finds a case ready, the common case of a loop over busy channels, then pays
    /// one lock instead of sorting its channels and taking all their locks. Holding every lock is needed
    /// only to queue the cases atomically (step 4); a case performed at once needs only its own
    /// channel's lock, as a plain receive or send does, and nobody else can know this select yet.</para>
    /// <para>The choice stays Go's: the first ready case in a uniform random order. The poll is not a
    /// snapshot: a case polled before the winner and found not ready may have become ready by the time
    /// the winner is performed. Every outcome is still one Go allows (the case performed was ready
    /// when performed, and no case it passed over was ready when polled); only when readiness races
    /// with the poll itself can the order lean towards later cases.</para>
    /// </remarks>
    private int PollOneLockAtATime(CaseSlot[] slots, ReadOnlySpan<int> pollOrder)
    {
        foreach (int i in pollOrder)
        {
            SelectCase c = slots[i].Case!;
            c.EnterLock();
            if (c.TryPerformLocked())
            {
                _committed = 1;
                _winner = c.Index;
                c.ExitLock();
                return i;
            }

            c.ExitLock();
        }

        return -1;
    }

    /// <summary>
    /// A timeout of zero fires at once when no case is ready, as <see cref="Job.Delay(TimeSpan, CancellationToken)"/>
    /// of zero completes at once: it acts as a default case (step 3) and arms no timer, which would
    /// fire only at the next tick, a millisecond or more later.
    /// </summary>
    private bool HasZeroTimeout => _timeoutIndex >= 0 && _timeout == TimeSpan.Zero;

    /// <summary>Step 3, for a default case or a zero timeout (also the whole select when it has no channel case).</summary>
    private bool TryResolveDefault()
    {
        int index = _defaultIndex >= 0 ? _defaultIndex : HasZeroTimeout ? _timeoutIndex : -1;
        if (index < 0)
        {
            return false;
        }

        _committed = 1;
        _winner = index;
        TrySetResult(index);
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
            TimerQueue.Schedule(_timer, _timeout); // on the clock of the runtime the select runs on
        }

        if (_cancellationToken.CanBeCanceled)
        {
            _registration = _cancellationToken.UnsafeRegister(s_onCanceled, this);
        }
    }
}
