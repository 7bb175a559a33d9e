using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Text;
using System.Text.Json;

namespace Myriad.Compare;

/// <summary>One measured run, as printed by a child (this tool's or gobench) on one JSON line.</summary>
internal sealed class RunResult
{
    public string Experiment { get; set; } = "";

    public string Variant { get; set; } = "";

    public string Mode { get; set; } = "";

    public long N { get; set; }

    public int Work { get; set; }

    public double WallMs { get; set; }

    public double CpuMs { get; set; }

    public long PeakWsBytes { get; set; }

    public long AllocatedBytes { get; set; }

    public long Result { get; set; }

    public long Expected { get; set; }

    public bool ResultOk { get; set; }

    public int Gen0 { get; set; } = -1;

    public int Gen1 { get; set; } = -1;

    public int Gen2 { get; set; } = -1;

    /// <summary>Experiment-specific values (the sleepers' late_p50_ms, late_p99_ms, late_max_ms...).</summary>
    public Dictionary<string, double> Metrics { get; set; } = new(StringComparer.Ordinal);

    public string ToJson()
    {
        using var stream = new MemoryStream();
        using (var w = new Utf8JsonWriter(stream))
        {
            w.WriteStartObject();
            w.WriteString("experiment", Experiment);
            w.WriteString("variant", Variant);
            w.WriteString("mode", Mode);
            w.WriteNumber("n", N);
            w.WriteNumber("work", Work);
            w.WriteNumber("wall_ms", Math.Round(WallMs, 3));
            w.WriteNumber("cpu_ms", Math.Round(CpuMs, 3));
            w.WriteNumber("peak_ws_bytes", PeakWsBytes);
            w.WriteNumber("allocated_bytes", AllocatedBytes);
            w.WriteNumber("result", Result);
            w.WriteNumber("expected", Expected);
            w.WriteBoolean("result_ok", ResultOk);
            if (Gen0 >= 0)
            {
                w.WriteNumber("gc_gen0", Gen0);
                w.WriteNumber("gc_gen1", Gen1);
                w.WriteNumber("gc_gen2", Gen2);
            }

            if (Metrics.Count > 0)
            {
                w.WriteStartObject("metrics");
                foreach (KeyValuePair<string, double> kv in Metrics)
                {
                    w.WriteNumber(kv.Key, Math.Round(kv.Value, 3));
                }

                w.WriteEndObject();
            }

            w.WriteEndObject();
        }

        return Encoding.UTF8.GetString(stream.ToArray());
    }

    /// <summary>Parses the protocol line; unknown fields are ignored. Null if the line is not a result.</summary>
    public static RunResult? TryParse(string line)
    {
        line = line.Trim();
        if (!line.StartsWith('{'))
        {
            return null;
        }

        try
        {
            using JsonDocument doc = JsonDocument.Parse(line);
            JsonElement root = doc.RootElement;
            var r = new RunResult
            {
                Experiment = Str(root, "experiment"),
                Variant = Str(root, "variant"),
                Mode = Str(root, "mode"),
                N = root.GetProperty("n").GetInt64(),
                Work = root.TryGetProperty("work", out JsonElement work) ? work.GetInt32() : 0,
                WallMs = root.GetProperty("wall_ms").GetDouble(),
                CpuMs = root.GetProperty("cpu_ms").GetDouble(),
                PeakWsBytes = root.GetProperty("peak_ws_bytes").GetInt64(),
                AllocatedBytes = (long)root.GetProperty("allocated_bytes").GetDouble(),
                Result = root.TryGetProperty("result", out JsonElement res) ? res.GetInt64() : 0,
                Expected = root.TryGetProperty("expected", out JsonElement exp) ? exp.GetInt64() : 0,
                ResultOk = root.GetProperty("result_ok").GetBoolean(),
            };
            if (root.TryGetProperty("metrics", out JsonElement metrics) && metrics.ValueKind == JsonValueKind.Object)
            {
                foreach (JsonProperty p in metrics.EnumerateObject())
                {
                    r.Metrics[p.Name] = p.Value.GetDouble();
                }
            }

            return r;
        }
        catch (Exception e) when (e is JsonException or KeyNotFoundException or InvalidOperationException or FormatException)
        {
            return null;
        }
    }

    private static string Str(JsonElement root, string name) =>
        root.TryGetProperty(name, out JsonElement v) && v.ValueKind == JsonValueKind.String ? v.GetString() ?? "" : "";
}

/// <summary>The child's view of its own process: the clocks and counters a run is measured with.</summary>
internal readonly struct ProcessSnapshot
{
    public readonly long Timestamp;
    public readonly TimeSpan Cpu;
    public readonly long Allocated;
    public readonly int Gen0;
    public readonly int Gen1;
    public readonly int Gen2;

    private ProcessSnapshot(long timestamp, TimeSpan cpu, long allocated)
    {
        Timestamp = timestamp;
        Cpu = cpu;
        Allocated = allocated;
        Gen0 = GC.CollectionCount(0);
        Gen1 = GC.CollectionCount(1);
        Gen2 = GC.CollectionCount(2);
    }

    public static ProcessSnapshot Take()
    {
        // Order: allocation count and CPU first, the wall clock last (and first on the way out).
        long allocated = GC.GetTotalAllocatedBytes(precise: true);
        using Process self = Process.GetCurrentProcess();
        TimeSpan cpu = self.TotalProcessorTime;
        return new ProcessSnapshot(Stopwatch.GetTimestamp(), cpu, allocated);
    }

    public static ProcessSnapshot TakeEnd()
    {
        long timestamp = Stopwatch.GetTimestamp();
        using Process self = Process.GetCurrentProcess();
        TimeSpan cpu = self.TotalProcessorTime;
        long allocated = GC.GetTotalAllocatedBytes(precise: true);
        return new ProcessSnapshot(timestamp, cpu, allocated);
    }

    /// <summary>Peak resident set of the whole process: VmHWM from /proc/self/status, else PeakWorkingSet64.</summary>
    public static long PeakWorkingSet()
    {
        try
        {
            foreach (string line in File.ReadLines("/proc/self/status"))
            {
                if (line.StartsWith("VmHWM:", StringComparison.Ordinal))
                {
                    string[] parts = line["VmHWM:".Length..].Trim().Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    long kib = long.Parse(parts[0], CultureInfo.InvariantCulture);
                    return kib * 1024;
                }
            }
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }

        using Process self = Process.GetCurrentProcess();
        return self.PeakWorkingSet64;
    }
}

/// <summary>Median and spread of repeated runs.</summary>
internal static class Stats
{
    public static double Median(IReadOnlyList<double> values)
    {
        if (values.Count == 0)
        {
            return double.NaN;
        }

        var sorted = new List<double>(values);
        sorted.Sort();
        int mid = sorted.Count / 2;
        return sorted.Count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    public static double Min(IReadOnlyList<double> values)
    {
        double m = double.NaN;
        foreach (double v in values)
        {
            m = double.IsNaN(m) ? v : Math.Min(m, v);
        }

        return m;
    }

    public static double Max(IReadOnlyList<double> values)
    {
        double m = double.NaN;
        foreach (double v in values)
        {
            m = double.IsNaN(m) ? v : Math.Max(m, v);
        }

        return m;
    }
}
