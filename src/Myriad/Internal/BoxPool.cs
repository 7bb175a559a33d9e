using System;
using System.Threading;

namespace Myriad.Internal;

/// <summary>
/// A bounded pool of reusable objects of one type: a small per-thread stack, backed by a few shared
/// slots indexed by processor id.
/// </summary>
/// <remarks>
/// Protocol:
/// 1. Rent pops from the calling thread's stack; if it is empty, it exchanges a shared slot (chosen
///    by the current processor id) with null; if that is empty too, it returns null and the caller
///    allocates.
/// 2. Return pushes on the thread's stack; if that is full, it compare-exchanges the item into an
///    empty shared slot; if the slot is taken, the item is dropped for the GC.
/// The per-thread stack needs no synchronisation. A shared slot holds at most one item and is only
/// ever swapped atomically, so an item is handed to at most one renter. The pool never blocks and
/// never grows: a burst of a million live boxes is allocated once and mostly left to the GC.
/// An item must be fully reset before Return: the pool does not touch its fields.
/// </remarks>
internal static class BoxPool<T> where T : class
{
    /// <summary>One thread-static object rather than two fields: one TLS lookup per rent or return.</summary>
    [ThreadStatic] private static Stack? t_stack;

    private static readonly T?[] s_shared =
        new T?[Math.Max(1, Environment.ProcessorCount * MyriadDefaults.SharedPoolSlotsPerCore)];

    internal static T? Rent()
    {
        Stack? stack = t_stack;
        if (stack is not null && stack.Count > 0)
        {
            int count = --stack.Count;
            T? item = stack.Items[count];
            stack.Items[count] = null;
            return item;
        }

        if (MyriadDefaults.SharedPoolSlotsPerCore == 0)
        {
            return null;
        }

        ref T? slot = ref s_shared[(uint)Thread.GetCurrentProcessorId() % (uint)s_shared.Length];
        return Volatile.Read(ref slot) is null ? null : Interlocked.Exchange(ref slot, null);
    }

    internal static void Return(T item)
    {
        Stack? stack = t_stack ??= new Stack();
        if (stack.Count < stack.Items.Length)
        {
            stack.Items[stack.Count++] = item;
            return;
        }

        if (MyriadDefaults.SharedPoolSlotsPerCore > 0)
        {
            ref T? slot = ref s_shared[(uint)Thread.GetCurrentProcessorId() % (uint)s_shared.Length];
            Interlocked.CompareExchange(ref slot, item, null);
        }
    }

    private sealed class Stack
    {
        internal readonly T?[] Items = new T?[MyriadDefaults.PerThreadPoolDepth];
        internal int Count;
    }
}
