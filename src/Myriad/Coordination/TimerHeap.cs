using System;
using System.Diagnostics;
using Myriad.Internal;

namespace Myriad.Coordination;

/// <summary>
/// A binary min-heap of <see cref="TimerEntry"/> ordered by deadline: O(log n) insert, remove-first and
/// remove-anywhere (each entry knows its slot). Not thread-safe: the <see cref="TimerQueue"/> lock guards it.
/// </summary>
/// <remarks>
/// Invariants: <c>_items[0.._count)</c> is a heap (no entry fires before its parent); for every entry
/// in it, <c>_items[e.HeapIndex] == e</c>; slots from <c>_count</c> on are null.
/// </remarks>
internal sealed class TimerHeap
{
    /// <summary>
    /// Initial slots: small, because most processes have a handful of timers at a time; the array
    /// doubles as needed (100,000 concurrent timers cost 13 doublings, once).
    /// AppContext key: <c>Myriad.TimerHeapInitialCapacity</c>.
    /// </summary>
    private static readonly int InitialCapacity = MyriadDefaults.ReadInt("Myriad.TimerHeapInitialCapacity", 16, 1, 1 << 20);

    private TimerEntry?[] _items = new TimerEntry?[InitialCapacity];
    private int _count;

    internal int Count => _count;

    /// <summary>The entry that fires first; the heap must not be empty.</summary>
    internal TimerEntry First => _items[0]!;

    internal void Add(TimerEntry entry)
    {
        Debug.Assert(entry.HeapIndex < 0, "an entry is scheduled at most once at a time");
        if (_count == _items.Length)
        {
            Array.Resize(ref _items, _items.Length * 2);
        }

        Place(entry, _count);
        _count++;
        SiftUp(entry.HeapIndex);
    }

    /// <summary>Removes <paramref name="entry"/>, wherever it is; false if it is not in the heap.</summary>
    internal bool Remove(TimerEntry entry)
    {
        int index = entry.HeapIndex;
        if (index < 0)
        {
            return false;
        }

        Debug.Assert(ReferenceEquals(_items[index], entry), "heap index out of sync");
        _count--;
        TimerEntry? last = _items[_count];
        _items[_count] = null;
        entry.HeapIndex = -1;
        if (index < _count)
        {
            Place(last!, index);
            if (index > 0 && last!.FiresBefore(_items[(index - 1) / 2]!))
            {
                SiftUp(index);
            }
            else
            {
                SiftDown(index);
            }
        }

        return true;
    }

    private void Place(TimerEntry entry, int index)
    {
        _items[index] = entry;
        entry.HeapIndex = index;
    }

    private void SiftUp(int index)
    {
        TimerEntry entry = _items[index]!;
        while (index > 0)
        {
            int parent = (index - 1) / 2;
            TimerEntry above = _items[parent]!;
            if (!entry.FiresBefore(above))
            {
                break;
            }

            Place(above, index);
            index = parent;
        }

        Place(entry, index);
    }

    private void SiftDown(int index)
    {
        TimerEntry entry = _items[index]!;
        while (true)
        {
            int child = (2 * index) + 1;
            if (child >= _count)
            {
                break;
            }

            if (child + 1 < _count && _items[child + 1]!.FiresBefore(_items[child]!))
            {
                child++;
            }

            TimerEntry below = _items[child]!;
            if (!below.FiresBefore(entry))
            {
                break;
            }

            Place(below, index);
            index = child;
        }

        Place(entry, index);
    }
}
