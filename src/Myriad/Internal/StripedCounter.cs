using System;
using System.Threading;

namespace Myriad.Internal;

/// <summary>
/// A counter that many threads increment without contending: padded cells, summed on read (Java's
/// <c>LongAdder</c> idea). A runtime-wide counter bumped by every spawn and every completion would
/// otherwise bounce one cache line between the workers on every job.
/// </summary>
/// <remarks>
/// <para><b>Owned cells.</b> The first <see cref="MyriadDefaults.CounterOwnedStripes"/> threads to
/// use Myriad (their <see cref="PerThread.Stripe"/> numbers, unique and never reused) each own a
/// cell: only that thread writes it, with a plain read and a release store, so an increment costs
/// no interlocked instruction (the one it saved was about a tenth of a spawn tree's time on 2
/// cores). <see cref="Increment(PerThread)"/> must only be called with the calling thread's own
/// state, which is where every caller gets it.</para>
/// <para><b>Shared cells.</b> Any other thread increments, interlocked, one of the shared cells (one
/// per processor slot, by stripe number), so none is lost when two threads share a cell.</para>
/// <para><see cref="Sum"/> is a racy but monotonic snapshot: each cell only grows.</para>
/// </remarks>
internal sealed class StripedCounter
{
    /// <summary>Longs per cell: 128 bytes, two cache lines, so that adjacent-line prefetch does not pair cells.</summary>
    private const int Stride = 16;

    private readonly long[] _owned;
    private readonly long[] _shared;
    private readonly int _mask;

    internal StripedCounter()
    {
        int slots = 1;
        while (slots < Environment.ProcessorCount)
        {
            slots <<= 1;
        }

        _mask = slots - 1;
        _owned = new long[MyriadDefaults.CounterOwnedStripes * Stride];
        _shared = new long[slots * Stride];
    }

    /// <summary>Increments for the calling thread.</summary>
    internal void Increment() => Increment(PerThread.Current);

    /// <summary>Increments for the calling thread, whose state the caller already holds (it must be this thread's).</summary>
    internal void Increment(PerThread state)
    {
        int stripe = state.Stripe;
        if ((uint)stripe < (uint)MyriadDefaults.CounterOwnedStripes)
        {
            ref long cell = ref _owned[stripe * Stride];
            Volatile.Write(ref cell, cell + 1); // single writer: this thread
        }
        else
        {
            Interlocked.Increment(ref _shared[(stripe & _mask) * Stride]);
        }
    }

    internal long Sum()
    {
        long total = 0;
        for (int i = 0; i < _owned.Length; i += Stride)
        {
            total += Volatile.Read(ref _owned[i]);
        }

        for (int i = 0; i < _shared.Length; i += Stride)
        {
            total += Volatile.Read(ref _shared[i]);
        }

        return total;
    }
}
