using System;
using System.Threading;

namespace Myriad.Internal;

/// <summary>
/// A counter that many threads increment without contending: padded cells, one per processor slot,
/// chosen by the caller's processor id or by its thread's stripe number, summed on read (Java's
/// <c>LongAdder</c> idea). A runtime-wide counter bumped by every spawn and
/// every completion would otherwise bounce one cache line between the workers on every job.
/// </summary>
/// <remarks>
/// Increments are interlocked on the chosen cell, so none is lost when two threads share a cell or a
/// thread migrates between reading its processor id and incrementing; the choice of cell only
/// affects contention. <see cref="Sum"/> is a racy but monotonic snapshot.
/// </remarks>
internal sealed class StripedCounter
{
    /// <summary>Longs per cell: 128 bytes, two cache lines, so that adjacent-line prefetch does not pair cells.</summary>
    private const int Stride = 16;

    private readonly long[] _cells;
    private readonly int _mask;

    internal StripedCounter()
    {
        int slots = 1;
        while (slots < Environment.ProcessorCount)
        {
            slots <<= 1;
        }

        _mask = slots - 1;
        _cells = new long[slots * Stride];
    }

    internal void Increment() =>
        Interlocked.Increment(ref _cells[(Thread.GetCurrentProcessorId() & _mask) * Stride]);

    /// <summary>
    /// Increments the cell of the caller's thread (its <see cref="PerThread.Stripe"/>) instead of its
    /// processor's: no processor-id query (a system call whenever the runtime's cache of it expires).
    /// Stripe numbers are handed out process-wide in the order threads first use Myriad, so a
    /// runtime's workers usually land on distinct cells, but not always (other threads take numbers
    /// in between, and there are only as many cells as processor slots); a shared cell costs
    /// contention, never a lost count.
    /// </summary>
    internal void Increment(PerThread state) =>
        Interlocked.Increment(ref _cells[(state.Stripe & _mask) * Stride]);

    internal long Sum()
    {
        long total = 0;
        for (int i = 0; i < _cells.Length; i += Stride)
        {
            total += Volatile.Read(ref _cells[i]);
        }

        return total;
    }
}
