using System;
using System.Diagnostics;
using System.Numerics;
using System.Runtime.CompilerServices;

namespace Myriad.Channels;

/// <summary>
/// The buffer of a buffered channel: a FIFO ring over a power-of-two array that grows by doubling, up
/// to the channel's capacity, and is released when it empties if it grew past
/// <see cref="ChanDefaults.RetainedRingSize"/>. Not thread-safe (the channel's lock guards it). A separate object, so
/// that an unbuffered channel (one per stage of a pipeline) does not carry its fields.
/// </summary>
/// <remarks>
/// Invariants: <c>_count</c> items live at <c>_head</c>, <c>_head + 1</c>, ... modulo the array length;
/// free slots hold the default value (so the ring keeps no dead references alive).
/// </remarks>
internal sealed class ItemRing<T>
{
    private T[]? _items;
    private int _head;
    private int _count;

    /// <param name="capacity">The channel's capacity (int.MaxValue when unbounded). It lives here rather
    /// than in the channel, so that an unbuffered channel carries no field for it.</param>
    internal ItemRing(int capacity) => Capacity = capacity;

    /// <summary>The most items the channel may buffer.</summary>
    internal int Capacity { get; }

    internal int Count => _count;

    /// <summary>Whether another item may be buffered.</summary>
    internal bool HasRoom => _count < Capacity;

    /// <summary>Appends; the caller has checked <see cref="HasRoom"/> (or freed a slot).</summary>
    internal void Enqueue(T item)
    {
        T[]? items = _items;
        if (items is null || _count == items.Length)
        {
            items = Grow(Capacity);
        }

        items[(_head + _count) & (items.Length - 1)] = item;
        _count++;
    }

    /// <summary>Prepends (an item given back: it was the oldest); the caller has checked <see cref="HasRoom"/>.</summary>
    internal void EnqueueFront(T item)
    {
        T[]? items = _items;
        if (items is null || _count == items.Length)
        {
            items = Grow(Capacity);
        }

        _head = (_head - 1) & (items.Length - 1);
        items[_head] = item;
        _count++;
    }

    /// <summary>Removes the oldest item; the ring must not be empty.</summary>
    internal T Dequeue()
    {
        Debug.Assert(_count > 0, "dequeue from an empty ring");
        T[] items = _items!;
        ref T slot = ref items[_head];
        T item = slot;
        if (RuntimeHelpers.IsReferenceOrContainsReferences<T>())
        {
            slot = default!;
        }

        _head = (_head + 1) & (items.Length - 1);
        if (--_count == 0 && items.Length > ChanDefaults.RetainedRingSize)
        {
            // Drained after a burst: give the peak array back (ChanDefaults.RetainedRingSize).
            _items = null;
            _head = 0;
        }

        return item;
    }

    /// <summary>The length of the array the ring holds now (0 when it holds none).</summary>
    internal int AllocatedSlots => _items?.Length ?? 0;

    private T[] Grow(int capacity)
    {
        int size = _items is null
            ? (int)BitOperations.RoundUpToPowerOf2((uint)Math.Min(ChanDefaults.InitialRingSize, capacity))
            : checked(_items.Length * 2);
        var bigger = new T[size];
        if (_items is { } old)
        {
            for (int i = 0; i < _count; i++)
            {
                bigger[i] = old[(_head + i) & (old.Length - 1)];
            }
        }

        _items = bigger;
        _head = 0;
        return bigger;
    }
}
