using System;
using System.Threading;
using Xunit;

namespace Myriad.Tests.Support;

/// <summary>Helpers that keep tests from hanging and run code on threads with a known stack size.</summary>
internal static class TestHelpers
{
    internal static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(60);

    /// <summary>Runs <paramref name="body"/> on a new thread with the given stack size; fails on timeout.</summary>
    internal static T OnThread<T>(Func<T> body, int stackSize = 1 << 20, TimeSpan? timeout = null)
    {
        T result = default!;
        TestThread thread = TestThread.Start(() => result = body(), "test body", stackSize);
        if (!thread.Join(timeout ?? DefaultTimeout))
        {
            Assert.Fail($"The test body did not finish within {timeout ?? DefaultTimeout}: a hang or a lost wake-up.");
        }

        return result;
    }

    internal static void OnThread(Action body, int stackSize = 1 << 20, TimeSpan? timeout = null) =>
        OnThread(() => { body(); return 0; }, stackSize, timeout);

    /// <summary>
    /// Measures the bytes the calling thread allocates in <paramref name="body"/> once the JIT has
    /// settled: tiered compilation first runs unoptimized code (which boxes struct awaiters), so the
    /// measurement is repeated after pauses that let the optimized code arrive; the smallest is kept.
    /// </summary>
    internal static long SteadyStateAllocations(Action body, int attempts = 8)
    {
        long best = long.MaxValue;
        for (int i = 0; i < attempts && best > 0; i++)
        {
            body();
            long before = GC.GetAllocatedBytesForCurrentThread();
            body();
            long after = GC.GetAllocatedBytesForCurrentThread();
            best = Math.Min(best, after - before);
            if (best > 0)
            {
                Thread.Sleep(150);
            }
        }

        return best;
    }
}

/// <summary>Tests that use a lot of memory or CPU run one at a time in this collection.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class HeavyCollection
{
    public const string Name = "Heavy";
}
