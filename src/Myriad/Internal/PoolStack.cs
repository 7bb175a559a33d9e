using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Myriad.Internal;

/// <summary>
/// One pooled type's per-thread stack (see <see cref="PerThread.Pools"/>): owned by its thread, so
/// it needs no synchronisation.
/// </summary>
/// <remarks>
/// <para><b>Growth.</b> The stack starts at <see cref="MyriadDefaults.PerThreadPoolDepth"/> and
/// doubles when a return finds it full, up to <see cref="MyriadDefaults.PerThreadPoolMaxDepth"/>,
/// but only on a thread whose rents have found it empty (<see cref="Starved"/>).
/// A job that spawns a batch of a thousand jobs and then awaits them gets every box back before
/// the next batch, so from the second batch on it allocates nothing; a fixed depth of 8 would
/// allocate almost every box.</para>
/// <para><b>Trimming.</b> What a burst left behind should not stay forever. After every gen-2
/// collection <see cref="TrimEpoch"/> moves on; each stack notices on its owner's next return and
/// shrinks back to its initial depth, dropping the surplus for the GC. The check is one static read
/// per return. Only the owner ever touches a stack, so trimming is as safe as pushing.</para>
/// </remarks>
internal sealed class PoolStack
{
    private static int s_trimEpoch;

    private readonly int _depth;
    private readonly int _maxDepth;
    private object?[] _items;
    private int _epoch = Volatile.Read(ref s_trimEpoch);

    internal int Count;

    /// <summary>
    /// Set when a rent on this thread found the stack empty (see <see cref="BoxPool{T}"/>); cleared by
    /// a trim. Only a thread that also rents grows its stack: a thread that only returns boxes
    /// rented elsewhere (a worker finishing detached jobs spawned by another) would just hoard them,
    /// and the surplus is better left to the shared slots where the renting thread can find it.
    /// </summary>
    internal bool Starved;

    static PoolStack() => Gen2Trigger.Start();

    internal PoolStack()
        : this(MyriadDefaults.PerThreadPoolDepth, MyriadDefaults.PerThreadPoolMaxDepth)
    {
    }

    /// <summary>A stack of other depths than the configured ones (tests).</summary>
    internal PoolStack(int depth, int maxDepth)
    {
        _depth = depth;
        _maxDepth = Math.Max(depth, maxDepth);
        _items = new object?[depth];
    }

    /// <summary>Moves on after every gen-2 collection; a stack that saw another value trims.</summary>
    internal static int TrimEpoch => Volatile.Read(ref s_trimEpoch);

    /// <summary>The current capacity (tests and diagnostics).</summary>
    internal int Capacity => _items.Length;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal object? Pop()
    {
        int count = --Count;
        ref object? entry = ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_items), count);
        object? item = entry;
        entry = null;
        return item;
    }

    /// <summary>Pushes unless the stack is full at its maximum depth.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool TryPush(object item)
    {
        int count = Count;
        object?[] items = _items;
        if (count < items.Length && _epoch == s_trimEpoch)
        {
            // Through a ref: a plain store into object?[] pays the array-covariance check.
            Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(items), count) = item;
            Count = count + 1;
            return true;
        }

        return TryPushSlow(item);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryPushSlow(object item)
    {
        int epoch = Volatile.Read(ref s_trimEpoch);
        if (_epoch != epoch)
        {
            _epoch = epoch;
            Trim();
        }

        if (Count == _items.Length)
        {
            if (!Starved || _items.Length >= _maxDepth)
            {
                return false;
            }

            // From 1 when the initial depth is 0 (Myriad.ThreadPoolDepth allows it): doubling 0 stays 0.
            Array.Resize(ref _items, Math.Min(Math.Max(1, _items.Length * 2), _maxDepth));
        }

        _items[Count++] = item;
        return true;
    }

    /// <summary>Back to the initial depth; the surplus goes to the GC.</summary>
    private void Trim()
    {
        Starved = false;
        int depth = _depth;
        if (_items.Length <= depth)
        {
            return;
        }

        var kept = new object?[depth];
        int keep = Math.Min(Count, depth);
        Array.Copy(_items, kept, keep);
        _items = kept;
        Count = keep;
    }

    /// <summary>
    /// A finalizable object that is never reachable: the GC finalizes it, it re-registers itself and
    /// is promoted, so from then on it is only found dead by gen-2 collections (the BCL's array pool
    /// trims on the same signal). Each finalization moves the trim epoch on.
    /// </summary>
    private sealed class Gen2Trigger
    {
        private Gen2Trigger()
        {
        }

        internal static void Start() => _ = new Gen2Trigger();

        ~Gen2Trigger()
        {
            Interlocked.Increment(ref s_trimEpoch);
            if (!Environment.HasShutdownStarted)
            {
                GC.ReRegisterForFinalize(this);
            }
        }
    }
}
