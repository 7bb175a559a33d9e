using System;
using System.Diagnostics.CodeAnalysis;

namespace Myriad.Internal;

/// <summary>
/// A growable single-threaded FIFO ring of work items. Not thread-safe: used for per-thread
/// trampoline queues and by single-threaded runtimes under their own lock.
/// </summary>
internal sealed class WorkQueue
{
    // Slots wrap the reference in a struct: storing a WorkItem (an unsealed class) straight into a
    // WorkItem[] would cost an array-covariance type check per store.
    // The ring starts at 16 slots (128 bytes) and doubles when full: a thread's trampoline queue
    // rarely holds more than a few deferred items, and a runtime's queue grows to its load once.
    private Slot[] _items = new Slot[InitialCapacity];

    private const int InitialCapacity = 16;
    private int _head;
    private int _count;

    internal int Count => _count;

    internal void Enqueue(WorkItem item)
    {
        if (_count == _items.Length)
        {
            Grow();
        }

        _items[(_head + _count) & (_items.Length - 1)].Item = item;
        _count++;
    }

    internal bool TryDequeue([NotNullWhen(true)] out WorkItem? item)
    {
        if (_count == 0)
        {
            item = null;
            return false;
        }

        item = _items[_head].Item!;
        _items[_head].Item = null;
        _head = (_head + 1) & (_items.Length - 1);
        _count--;
        return true;
    }

    /// <summary>Removes the item at logical position <paramref name="index"/> (0 = head); order of the rest is kept.</summary>
    /// <remarks>
    /// Shifts whichever side of <paramref name="index"/> is shorter: a <see cref="Scheduling.DeterministicRuntime"/>
    /// removes at a random position on every step, and shifting the whole tail made a run with tens of
    /// thousands of ready jobs quadratic twice over (40k yielding jobs took 6.6 s). The order of
    /// the remaining items, which the seed's choices index into, is the same either way.
    /// </remarks>
    internal WorkItem RemoveAt(int index)
    {
        int mask = _items.Length - 1;
        WorkItem item = _items[(_head + index) & mask].Item!;
        if (index < _count / 2)
        {
            for (int i = index; i > 0; i--)
            {
                _items[(_head + i) & mask] = _items[(_head + i - 1) & mask];
            }

            _items[_head].Item = null;
            _head = (_head + 1) & mask;
        }
        else
        {
            for (int i = index; i < _count - 1; i++)
            {
                _items[(_head + i) & mask] = _items[(_head + i + 1) & mask];
            }

            _items[(_head + _count - 1) & mask].Item = null;
        }

        _count--;
        return item;
    }

    /// <summary>The item at logical position <paramref name="index"/> (0 = head), left in place.</summary>
    internal WorkItem PeekAt(int index) => _items[(_head + index) & (_items.Length - 1)].Item!;

    internal WorkItem PeekLast() => _items[(_head + _count - 1) & (_items.Length - 1)].Item!;

    internal void RemoveLast()
    {
        _items[(_head + _count - 1) & (_items.Length - 1)].Item = null;
        _count--;
    }

    private void Grow()
    {
        var bigger = new Slot[_items.Length * 2];
        for (int i = 0; i < _count; i++)
        {
            bigger[i] = _items[(_head + i) & (_items.Length - 1)];
        }

        _items = bigger;
        _head = 0;
    }

    private struct Slot
    {
        public WorkItem? Item;
    }
}
