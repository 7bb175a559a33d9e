using System;
using System.Threading;

namespace Myriad.Tests.Support;

/// <summary>
/// Allocation measurements of code in steady state, on the measuring thread.
/// </summary>
/// <remarks>
/// <para>Two effects of the JIT are filtered out. With tiered compilation a loop first runs
/// unoptimized code, in which the JIT has not yet removed the boxes that optimized code avoids (the
/// job builder's awaiter test, for one); optimized code replaces it in the background some 100 ms
/// after a method got hot. So a measurement is repeated, with pauses, until it reads zero or a few
/// seconds have passed. And dynamic PGO can leave a constant few bytes per call of an async method
/// that holds the loop (not per iteration), so the async form measures the loop at two lengths and
/// reports the difference: the cost of the extra iterations alone.</para>
/// </remarks>
internal static class SteadyState
{
    private const int Attempts = 30;
    private static readonly TimeSpan Pause = TimeSpan.FromMilliseconds(100);

    /// <summary>Bytes allocated on this thread by one run of <paramref name="loop"/>, once steady.</summary>
    internal static long AllocatedBytes(Action loop)
    {
        long bytes = 0;
        for (int attempt = 0; attempt < Attempts; attempt++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            loop();
            bytes = GC.GetAllocatedBytesForCurrentThread() - before;
            if (bytes == 0)
            {
                break;
            }

            Thread.Sleep(Pause);
        }

        return bytes;
    }

    /// <summary>
    /// Bytes that <paramref name="iterations"/> iterations of <paramref name="loop"/> (given its
    /// iteration count) allocate beyond the fixed cost of calling it, once steady; run inside a job.
    /// </summary>
    internal static async Job<long> AllocatedBytesAsync(Func<int, Job> loop, int iterations)
    {
        long bytes = 0;
        for (int attempt = 0; attempt < Attempts; attempt++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            await loop(iterations);
            long single = GC.GetAllocatedBytesForCurrentThread() - before;
            before = GC.GetAllocatedBytesForCurrentThread();
            await loop(2 * iterations);
            long twice = GC.GetAllocatedBytesForCurrentThread() - before;
            bytes = twice - single;
            if (bytes == 0)
            {
                break;
            }

            Thread.Sleep(Pause); // on a current-thread runtime nothing else needs this thread meanwhile
        }

        return bytes;
    }
}
