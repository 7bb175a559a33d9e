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

    /// <summary>The collector's pauses (see <see cref="RecordGcPauses"/>), or null before the first call.</summary>
    private static GcPauses? s_gcPauses;

    private static bool s_recordGcPauses;

    public static void Clear()
    {
        LatenessTicks = null;
        Extra.Clear();
        s_recordGcPauses = false;
    }

    /// <summary>
    /// Reports the garbage collector's pauses of the measured run beside its other values (gc_pauses,
    /// gc_pause_total_ms, gc_pause_max_ms): the host calls it right before that run, for experiments
    /// that ask (<see cref="Experiment.ReportsGcPauses"/>). The listener is created on the first call and kept.
    /// </summary>
    public static void RecordGcPauses()
    {
        s_gcPauses ??= new GcPauses();
        s_gcPauses.Restart();
        s_recordGcPauses = true;
    }

    /// <summary>The named values of the last run: late_p50_ms, late_p99_ms, late_max_ms and late_min_ms when lateness was recorded, and the collector's pauses when they were.</summary>
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

        if (s_recordGcPauses)
        {
            s_gcPauses!.Drain(values);
        }

        return values;
    }
}
