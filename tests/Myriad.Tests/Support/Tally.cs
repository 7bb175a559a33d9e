using System.Threading;

namespace Myriad.Tests.Support;

/// <summary>Shared counters for tests that measure how many jobs were inside a section at once.</summary>
internal static class Tally
{
    /// <summary>Raises <paramref name="target"/> to <paramref name="value"/> if that is larger, atomically (a running maximum).</summary>
    internal static void RaiseTo(ref int target, int value)
    {
        int current = Volatile.Read(ref target);
        while (value > current)
        {
            int seen = Interlocked.CompareExchange(ref target, value, current);
            if (seen == current)
            {
                return;
            }

            current = seen;
        }
    }
}
