using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Myriad.Internal;

/// <summary>
/// A bounded pool of reusable objects of one type: a small per-thread stack, backed by a few shared
/// slots indexed by processor id.
/// </summary>
/// <remarks>
/// <para>Protocol:
/// 1. Rent pops from the calling thread's stack; if it is empty, it exchanges a shared slot (chosen
///    by the current processor id) with null; if that is empty too, it returns null and the caller
///    allocates.
/// 2. Return pushes on the thread's stack (which grows on demand up to a bound, see
///    <see cref="PoolStack"/>); if that is full, it compare-exchanges the item into an empty shared
///    slot; if the slot is taken, the item is dropped for the GC.
/// The per-thread stack needs no synchronisation. A shared slot holds at most one item and is only
/// ever swapped atomically, so an item is handed to at most one renter. The pool never blocks; a
/// burst of a million live boxes is allocated once and mostly left to the GC, while a batch of about
/// a thousand (spawn a batch, await it, repeat: the spawn experiment) recycles without allocating.
/// An item must be fully reset before Return: the pool does not touch its fields.</para>
/// <para>Why the per-thread stacks live in <see cref="PerThread"/> (one array slot per pooled type)
/// rather than in a thread-static of this generic class: a thread-static of a generic type is
/// reached through a runtime helper that looks the type up, several times the cost of the one
/// non-generic thread-static read, and a suspend/resume hop rents and returns two or three times.
/// Hot paths that already hold the thread's <see cref="PerThread"/> pass it in.</para>
/// </remarks>
internal sealed class BoxPool<T> where T : class
{
    /// <summary>
    /// The pool of <typeparamref name="T"/>. Hot callers copy it into a static field of their own
    /// (non-shared) type: a static of this generic class, read from code shared across reference
    /// types, costs a type lookup on every access.
    /// </summary>
    internal static readonly BoxPool<T> Shared = new();

    /// <summary>This type's index into <see cref="PerThread.Pools"/>.</summary>
    private readonly int _slot = PerThread.NewPoolSlot();

    private readonly T?[] _shared =
        new T?[Math.Max(1, Environment.ProcessorCount * MyriadDefaults.SharedPoolSlotsPerCore)];

    private BoxPool()
    {
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal T? Rent() => Rent(PerThread.CurrentOrNull);

    internal T? Rent(PerThread? state)
    {
        if (state is not null)
        {
            PoolStack?[] pools = state.Pools;
            int slot = _slot;
            if ((uint)slot < (uint)pools.Length && pools[slot] is { } stack)
            {
                if (stack.Count > 0)
                {
                    return Unsafe.As<T>(stack.Pop());
                }

                stack.Starved = true;
            }
        }

        if (MyriadDefaults.SharedPoolSlotsPerCore == 0)
        {
            return null;
        }

        ref T? shared = ref _shared[(uint)Thread.GetCurrentProcessorId() % (uint)_shared.Length];
        return Volatile.Read(ref shared) is null ? null : Interlocked.Exchange(ref shared, null);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Return(T item) => Return(PerThread.Current, item);

    internal void Return(PerThread state, T item)
    {
        PoolStack stack = state.GetPoolStack(_slot);
        if (stack.TryPush(item))
        {
            return;
        }

        if (MyriadDefaults.SharedPoolSlotsPerCore > 0)
        {
            ref T? shared = ref _shared[(uint)Thread.GetCurrentProcessorId() % (uint)_shared.Length];
            Interlocked.CompareExchange(ref shared, item, null);
        }
    }
}
