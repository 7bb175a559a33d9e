using System.Collections.Generic;
using System.Threading.Tasks;

namespace Myriad.Tests.Testing;

// Copies of primitives with a concurrency bug planted on purpose, for the explorer to find. On a
// single-threaded runtime a race needs an await between the check and the act: each bug sits across
// a Task.Yield, where real code would await an I/O call, a log write or a lock of its own.

/// <summary>A wait group whose <see cref="Done"/> reads the count, yields, then writes it back: a check-then-act race that loses a decrement.</summary>
internal sealed class RacyWaitGroup
{
    private int _count;
    private Promise<bool> _zero = new();

    internal void Add(int delta) => _count += delta;

    internal async Job Done()
    {
        int seen = _count;
        await Task.Yield(); // BUG: another Done may run here; its decrement is then overwritten
        _count = seen - 1;
        if (_count == 0)
        {
            _zero.TrySetResult(true);
        }
    }

    internal async Job WaitAsync()
    {
        if (_count > 0)
        {
            await _zero.Job;
        }
    }
}

/// <summary>A mutex whose lock checks the flag, yields, and only then queues itself: an unlock in between wakes nobody (a lost wake-up).</summary>
internal sealed class LostWakeupMutex
{
    private readonly Queue<Promise<bool>> _waiters = new();
    private bool _locked;

    internal async Job LockAsync()
    {
        if (!_locked)
        {
            _locked = true;
            return;
        }

        await Task.Yield(); // BUG: the holder may unlock here, finding no waiter to hand the lock to
        var wakeUp = new Promise<bool>();
        _waiters.Enqueue(wakeUp);
        await wakeUp.Job;
    }

    internal void Unlock()
    {
        if (_waiters.TryDequeue(out Promise<bool>? next))
        {
            next.SetResult(true); // hand the lock over: it stays locked
        }
        else
        {
            _locked = false;
        }
    }
}

/// <summary>A one-slot buffer whose producer installs its not-full signal after a yield: a take in between notifies nobody (a missed notify).</summary>
internal sealed class MissedNotifyBuffer
{
    private readonly Queue<int> _items = new();
    private Promise<bool>? _notFull;
    private Promise<bool>? _notEmpty;

    internal async Job PutAsync(int item)
    {
        while (_items.Count == 1)
        {
            await Task.Yield(); // BUG: a take may run here, before the signal below exists to be notified
            _notFull = new Promise<bool>();
            await _notFull.Job;
        }

        _items.Enqueue(item);
        Promise<bool>? waiting = _notEmpty;
        _notEmpty = null;
        waiting?.TrySetResult(true);
    }

    internal async Job<int> TakeAsync()
    {
        while (_items.Count == 0)
        {
            _notEmpty = new Promise<bool>();
            await _notEmpty.Job;
        }

        int item = _items.Dequeue();
        Promise<bool>? waiting = _notFull;
        _notFull = null;
        waiting?.TrySetResult(true);
        return item;
    }
}
