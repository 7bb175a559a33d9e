using System;
using System.Collections.Generic;

namespace Myriad.Compare.Experiments;

/// <summary>
/// Extra measurements a variant hands to the child host beside its result (the sleepers' per-sleeper
/// timer lateness). The host clears it before the measured run and turns it into named values after
/// the clocks have stopped, so that sorting millions of samples is not measured.
/// </summary>
internal static class ChildMetrics
{
    /// <summary>Lateness of each sleeper in <see cref="System.Diagnostics.Stopwatch"/> ticks (wake time - due time), or null.</summary>
    public static long[]? LatenessTicks { get; set; }

    /// <summary>Named values a variant computed itself (the echo experiment's context switches).</summary>
    public static Dictionary<string, double> Extra { get; } = new(StringComparer.Ordinal);

    public static void Clear()
    {
        LatenessTicks = null;
        Extra.Clear();
    }

    /// <summary>The named values of the last run: late_p50_ms, late_p99_ms, late_max_ms and late_min_ms when lateness was recorded.</summary>
    public static Dictionary<string, double> Collect()
    {
        var values = new Dictionary<string, double>(Extra, StringComparer.Ordinal);
        long[]? late = LatenessTicks;
        if (late is { Length: > 0 })
        {
            long[] sorted = (long[])late.Clone();
            Array.Sort(sorted);
            double toMs = 1000.0 / System.Diagnostics.Stopwatch.Frequency;
            values["late_p50_ms"] = sorted[(sorted.Length - 1) / 2] * toMs;
            values["late_p99_ms"] = sorted[(int)Math.Min(sorted.Length - 1, (long)Math.Ceiling(sorted.Length * 0.99) - 1)] * toMs;
            values["late_max_ms"] = sorted[^1] * toMs;
            values["late_min_ms"] = sorted[0] * toMs;
        }

        return values;
    }
}
