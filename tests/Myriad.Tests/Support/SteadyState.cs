using System;
using System.Threading;

namespace Myriad.Tests.Support;

/// <summary>
/// Allocation measurements of async loops in steady state, on the measuring thread (the synchronous
/// form is <see cref="TestHelpers.SteadyStateAllocations"/>).
/// </summary>
/// <remarks>
/// As there, a measurement is repeated, with pauses, until the JIT's optimized code runs. Besides,
/// dynamic PGO can leave a constant few bytes per call of an async method that holds the loop (not
/// per iteration), so the loop is measured at two lengths and the difference reported: the cost of
/// the extra iterations alone.
/// </remarks>
internal static class SteadyState
{
    private const int Attempts = 30;
    private static readonly TimeSpan Pause = TimeSpan.FromMilliseconds(100);

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
