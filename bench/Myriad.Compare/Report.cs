using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.Json;
using Myriad.Compare.Experiments;

namespace Myriad.Compare;

/// <summary>Markdown tables (stdout and report.md) and the --json lines.</summary>
internal static class Report
{
    /// <summary>The Myriad row to compare <paramref name="row"/> with: same case, or (per-op experiments) the experiment's one.</summary>
    public static Row? Baseline(IReadOnlyList<Row> rows, Row row)
    {
        Row? best = null;
        double bestDistance = double.MaxValue;
        foreach (Row r in rows)
        {
            if (r.Experiment != row.Experiment || !r.Variant.IsMyriad || !r.HasData || r.Status != RowStatus.Ok)
            {
                continue;
            }

            if (!row.Experiment.ComparePerOp)
            {
                if (r.Case == row.Case)
                {
                    return r;
                }

                continue;
            }

            if (row.Variant.IsMyriad)
            {
                return row.HasData ? row : null;
            }

            // Per-op experiments (E1): the myriad run whose depth is nearest (log scale).
            double distance = Math.Abs(Math.Log((double)r.Case.N / row.Case.N));
            if (distance < bestDistance)
            {
                best = r;
                bestDistance = distance;
            }
        }

        return best;
    }

    public static double TimeRatio(Row row, Row myriad) =>
        row.Experiment.ComparePerOp ? row.NsPerOp / myriad.NsPerOp : row.WallMs / myriad.WallMs;

    public static double ColdTimeRatio(Row row, Row myriad) =>
        row.Experiment.ComparePerOp ? row.ColdNsPerOp / myriad.ColdNsPerOp : row.ColdWallMs / myriad.ColdWallMs;

    public static double MemoryRatio(Row row, Row myriad) =>
        row.Experiment.ComparePerOp ? row.BytesPerOp / myriad.BytesPerOp : row.PeakWs / myriad.PeakWs;

    public static string MemoryRatioName(Experiment e) => e.ComparePerOp ? $"alloc/{e.Unit}" : "peak WS";

    /// <summary>
    /// One line per (experiment, size): Myriad's median against the fastest TPL variant and against Go,
    /// warm and cold. A ratio above 1 means Myriad is faster; "MYRIAD SLOWER" marks the rows that are the next work.
    /// </summary>
    public static string Summary(IReadOnlyList<Row> rows)
    {
        var sb = new StringBuilder();
        sb.AppendLine("### Summary: myriad against the fastest TPL variant and against Go, warm and cold");
        sb.AppendLine();
        sb.AppendLine("Ratios are other/myriad of median wall time (E1: time per level), so above 1x means Myriad is faster. Warm: after a warm-up in the same process; cold: the first run of a fresh process, no warm-up; the cold ratios compare cold with cold. myriad-aot: the myriad code compiled with NativeAOT, cold.");
        sb.AppendLine();
        sb.AppendLine("| experiment | size | myriad | fastest TPL variant | TPL/myriad | go | go/myriad | myriad cold | TPL/myriad cold | go/myriad cold | myriad-aot cold | verdict |");
        sb.AppendLine("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|");
        foreach (Experiment e in rows.Select(r => r.Experiment).Distinct())
        {
            List<Row> mine = rows.Where(r => r.Experiment == e).ToList();
            IEnumerable<Row> myriadRows = mine.Where(r => r.Variant.IsMyriad);
            foreach (Row m in myriadRows)
            {
                bool perOp = e.ComparePerOp;
                Func<Row, double> value = perOp ? r => r.NsPerOp : r => r.WallMs;
                Func<Row, double> cold = perOp ? r => r.ColdNsPerOp : r => r.ColdWallMs;
                Func<double, string> show = perOp ? v => Format.PerOpNs(v) + "/" + e.Unit : Format.Ms;
                List<Row> peers = mine.Where(r => r != m && (perOp ? Baseline(rows, r) == m : r.Case == m.Case)).ToList();
                List<Row> tplRows = peers.Where(r => r.Variant.Id.StartsWith("tpl", StringComparison.Ordinal) && r.HasData && r.Status == RowStatus.Ok).ToList();
                Row? tpl = tplRows.OrderBy(value).FirstOrDefault();
                Row? tplCold = tplRows.Where(r => r.HasCold).OrderBy(cold).FirstOrDefault();
                Row? go = peers.FirstOrDefault(r => r.Variant.Kind == VariantKind.Go);
                Row? aot = peers.FirstOrDefault(r => r.Variant.Kind == VariantKind.Aot);
                string size = perOp ? m.Case.ShortLabel + (peers.Count > 0 ? " (vs " + string.Join(", ", peers.Select(p => p.Variant.Id + " at " + p.Case.ShortLabel)) + ")" : "") : m.Case.ShortLabel;
                string aotCell = aot is null ? "-" : aot.HasCold && aot.Status == RowStatus.Ok ? show(cold(aot)) : aot.StatusText;
                if (!m.HasData || m.Status != RowStatus.Ok)
                {
                    string tplOnly = tpl is null ? "-" : $"{tpl.Variant.Id} {show(value(tpl))}";
                    sb.AppendLine($"| {e.Id} | {size} | {m.StatusText} | {tplOnly} | - | {(go is null ? "-" : go.HasData ? show(value(go)) : go.StatusText)} | - | - | - | - | {aotCell} | - |");
                    continue;
                }

                bool goOk = go is { HasData: true, Status: RowStatus.Ok };
                double mv = value(m);
                string tplRatio = tpl is null ? "-" : Format.Ratio(value(tpl) / mv);
                string goCell = go is null ? "-" : goOk ? show(value(go!)) : go.StatusText;
                string goRatio = goOk ? Format.Ratio(value(go!) / mv) : "-";
                bool mCold = m.HasCold;
                string coldCell = mCold ? show(cold(m)) : m.ColdNote ?? "-";
                string tplColdRatio = mCold && tplCold is not null ? $"{Format.Ratio(cold(tplCold) / cold(m))}{(tplCold != tpl ? " (" + tplCold.Variant.Id + ")" : "")}" : "-";
                string goColdRatio = mCold && goOk && go!.HasCold ? Format.Ratio(cold(go) / cold(m)) : "-";
                var slower = new List<string>();
                if (tpl is not null && value(tpl) < mv)
                {
                    slower.Add("TPL");
                }

                if (goOk && value(go!) < mv)
                {
                    slower.Add("Go");
                }

                if (mCold && tplCold is not null && cold(tplCold) < cold(m))
                {
                    slower.Add("TPL cold");
                }

                if (mCold && goOk && go!.HasCold && cold(go) < cold(m))
                {
                    slower.Add("Go cold");
                }

                bool compared = tpl is not null || goOk;
                string verdict = !compared ? "(no peer at this size)" : slower.Count == 0 ? "myriad ahead" : "MYRIAD SLOWER than " + string.Join(", ", slower);
                string tplCell = tpl is null ? "-" : $"{tpl.Variant.Id} {show(value(tpl))}";
                sb.AppendLine($"| {e.Id} | {size} | {show(mv)} | {tplCell} | {tplRatio} | {goCell} | {goRatio} | {coldCell} | {tplColdRatio} | {goColdRatio} | {aotCell} | {verdict} |");
            }
        }

        sb.AppendLine();
        return sb.ToString();
    }

    public static string Tables(IReadOnlyList<Row> rows, Func<Experiment, string?>? chartLink = null)
    {
        var sb = new StringBuilder();
        foreach (Experiment e in rows.Select(r => r.Experiment).Distinct())
        {
            sb.Append(Table(rows, e, chartLink?.Invoke(e)));
        }

        return sb.ToString();
    }

    public static string Table(IReadOnlyList<Row> all, Experiment e, string? chart)
    {
        List<Row> rows = all.Where(r => r.Experiment == e).ToList();
        var sb = new StringBuilder();
        sb.AppendLine($"### {e.Id}: {e.Title}");
        sb.AppendLine();
        sb.AppendLine(e.Summary);
        sb.AppendLine();
        string unit = e.Unit;
        sb.AppendLine($"| size | variant | wall (median) | spread (min-max) | cold wall | CPU | peak WS | allocated | time/{unit} | alloc/{unit} | time vs myriad | cold vs myriad | {MemoryRatioName(e)} vs myriad | runs (warm+cold) |");
        sb.AppendLine("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (Row r in rows)
        {
            string size = r.Case.ShortLabel;
            if (r.Variant.ProbeDepth && r.DeepestPassed is not null)
            {
                size += r.FirstOverflow is long f ? $" (deepest; {Format.Count(f)} overflowed)" : " (deepest probed)";
            }

            if (!r.HasData || r.Status is RowStatus.Missing or RowStatus.Skipped or RowStatus.Pending or RowStatus.Overflow or RowStatus.Unavailable)
            {
                string what = r.Status switch
                {
                    RowStatus.Missing => "missing",
                    RowStatus.Skipped => "skipped",
                    RowStatus.Pending => "pending",
                    RowStatus.Overflow => "stack overflow",
                    RowStatus.Unavailable => "unavailable",
                    _ => "FAILED",
                };
                sb.AppendLine($"| {size} | {r.Variant.Id} | {what} | {Escape(r.Note ?? "")} | | | | | | | | | | |");
                continue;
            }

            Row? baseline = Baseline(all, r);
            string time = "-", mem = "-", coldRatio = "-";
            if (baseline is not null)
            {
                time = Format.Ratio(TimeRatio(r, baseline));
                mem = Format.Ratio(MemoryRatio(r, baseline));
                if (r.HasCold && baseline.HasCold)
                {
                    coldRatio = Format.Ratio(ColdTimeRatio(r, baseline));
                }
            }

            string coldWall = r.HasCold ? Format.Ms(r.ColdWallMs) : Escape(r.ColdNote ?? "-");

            string wall = Format.Ms(r.WallMs) + (r.Status == RowStatus.Failed ? " FAILED: " + Escape(r.Note ?? "") : "");
            sb.AppendLine($"| {size} | {r.Variant.Id} | {wall} | {Format.Ms(r.WallMin)} - {Format.Ms(r.WallMax)} | {coldWall} | {Format.Ms(r.CpuMs)} | {Format.Bytes(r.PeakWs)} | {Format.Bytes(r.Allocated)} | {Format.PerOpNs(r.NsPerOp)} | {Format.PerOpBytes(r.BytesPerOp)} | {time} | {coldRatio} | {mem} | {r.Runs.Count}+{r.ColdRuns.Count} |");
        }

        sb.AppendLine();
        string ratios = RatioLines(all, rows);
        if (ratios.Length > 0)
        {
            sb.Append(ratios);
            sb.AppendLine();
        }

        string metrics = MetricLines(rows);
        if (metrics.Length > 0)
        {
            sb.Append(metrics);
            sb.AppendLine();
        }

        string peaks = PeakPerLinkLines(rows);
        if (peaks.Length > 0)
        {
            sb.Append(peaks);
            sb.AppendLine();
        }

        if (chart is not null)
        {
            sb.AppendLine($"![{e.Id}]({chart})");
            sb.AppendLine();
        }

        return sb.ToString();
    }

    private static string RatioLines(IReadOnlyList<Row> all, List<Row> rows)
    {
        var sb = new StringBuilder();
        foreach (Row r in rows)
        {
            if (r.Variant.IsMyriad || !r.HasData || r.Status != RowStatus.Ok)
            {
                continue;
            }

            Row? baseline = Baseline(all, r);
            if (baseline is null)
            {
                continue;
            }

            double t = TimeRatio(r, baseline);
            double m = MemoryRatio(r, baseline);
            string what = r.Experiment.ComparePerOp ? $"time per {r.Experiment.Unit}" : "time";
            string verdict = t >= 1 ? "myriad faster" : "MYRIAD SLOWER";
            string cold = r.HasCold && baseline.HasCold ? $", {Format.Ratio(ColdTimeRatio(r, baseline))} cold" : "";
            sb.AppendLine($"- {r.Case.ShortLabel}: {r.Variant.Id}/myriad = {Format.Ratio(t)} {what} ({verdict}){cold}, {Format.Ratio(m)} {(r.Experiment.ComparePerOp ? "allocation per " + r.Experiment.Unit : "peak memory")}");
        }

        return sb.ToString();
    }

    /// <summary>
    /// Peak memory per link at each variant's largest size, two ways: the whole process's peak
    /// working set divided by N (which includes the runtime's fixed footprint: for .NET about
    /// 40 MiB, which is 42 B per link at N = 1M), and the growth of the peak per added link between
    /// the variant's smallest and largest sizes, which leaves that fixed footprint out.
    /// </summary>
    private static string PeakPerLinkLines(List<Row> rows)
    {
        var sb = new StringBuilder();
        foreach (IGrouping<Variant, Row> group in rows.Where(r => r.Experiment.ReportsPeakPerUnit).GroupBy(r => r.Variant))
        {
            List<Row> ok = group.Where(r => r.HasData && r.Status == RowStatus.Ok)
                .OrderBy(r => r.Case.N).ToList();
            if (ok.Count < 2)
            {
                continue;
            }

            Row small = ok[0], large = ok[^1];
            double whole = large.PeakWs / large.Case.N;
            double growth = (large.PeakWs - small.PeakWs) / (large.Case.N - small.Case.N);
            sb.AppendLine($"- {group.Key.Id}: peak WS per {large.Experiment.Unit} at {large.Case.ShortLabel}: {Format.PerOpBytes(whole)} (whole process / N), {Format.PerOpBytes(growth)} (peak growth per added {large.Experiment.Unit}, {small.Case.ShortLabel} to {large.Case.ShortLabel})");
        }

        return sb.ToString();
    }

    /// <summary>The collector's pauses beside a row's lateness (medians over the runs), or nothing for a child that did not report them (Go).</summary>
    private static string GcPauseText(Row r)
    {
        if (!r.HasMetric("gc_pauses"))
        {
            return "";
        }

        double pauses = r.Metric("gc_pauses");
        if (pauses == 0)
        {
            return "; no GC pauses";
        }

        string longest = r.HasMetric("gc_pause_max_ms") ? $", longest {Format.Ms(r.Metric("gc_pause_max_ms"))}" : "";
        return $"; {pauses:0} GC pauses{longest}, {Format.Ms(r.Metric("gc_pause_total_ms"))} in all";
    }

    /// <summary>Timer lateness of the sleepers (medians over the warm runs of each run's median, p99 and maximum), with the collector's pauses of the same runs; context switches of the echo rows (medians over the warm runs).</summary>
    private static string MetricLines(List<Row> rows)
    {
        var sb = new StringBuilder();
        foreach (Row r in rows.Where(r => r.HasData && r.HasMetric("late_p50_ms")))
        {
            sb.AppendLine($"- {r.Case.ShortLabel} {r.Variant.Id}: timer lateness median {Format.Ms(r.Metric("late_p50_ms"))}, p99 {Format.Ms(r.Metric("late_p99_ms"))}, max {Format.Ms(r.Metric("late_max_ms"))} (earliest {Format.Ms(r.Metric("late_min_ms"))}){GcPauseText(r)}; peak WS per {r.Experiment.Unit} {Format.PerOpBytes(r.PeakWs / r.Case.N)}");
        }

        foreach (Row r in rows.Where(r => r.HasData && r.HasMetric("ctx_switches")))
        {
            double switches = r.Metric("ctx_switches");
            string voluntary = r.HasMetric("ctx_voluntary") ? $", {Format.Count((long)r.Metric("ctx_voluntary"))} voluntary" : "";
            sb.AppendLine($"- {r.Case.ShortLabel} {r.Variant.Id}: {Format.Count((long)switches)} context switches{voluntary}, {switches / r.Ops:0.###} per {r.Experiment.Unit}");
        }

        return sb.ToString();
    }

    private static string Escape(string s) => s.Replace("|", "\\|", StringComparison.Ordinal).Replace("\n", " ", StringComparison.Ordinal);

    public static IEnumerable<string> JsonLines(IReadOnlyList<Row> rows)
    {
        foreach (Row r in rows)
        {
            using var stream = new MemoryStream();
            using (var w = new Utf8JsonWriter(stream))
            {
                w.WriteStartObject();
                w.WriteString("experiment", r.Experiment.Id);
                w.WriteString("variant", r.Variant.Id);
                w.WriteNumber("n", r.Case.N);
                w.WriteString("mode", r.Case.Mode);
                w.WriteNumber("work", r.Case.Work);
                w.WriteString("status", r.StatusText);
                if (r.HasData)
                {
                    w.WriteNumber("wall_ms", Math.Round(r.WallMs, 3));
                    w.WriteNumber("wall_ms_min", Math.Round(r.WallMin, 3));
                    w.WriteNumber("wall_ms_max", Math.Round(r.WallMax, 3));
                    w.WriteNumber("cpu_ms", Math.Round(r.CpuMs, 3));
                    w.WriteNumber("peak_ws_bytes", (long)r.PeakWs);
                    w.WriteNumber("allocated_bytes", (long)r.Allocated);
                    w.WriteBoolean("result_ok", r.ResultOk == true);
                    w.WriteNumber("ns_per_op", Math.Round(r.NsPerOp, 2));
                    w.WriteStartArray("wall_ms_runs");
                    foreach (RunResult run in r.Runs)
                    {
                        w.WriteNumberValue(Math.Round(run.WallMs, 3));
                    }

                    w.WriteEndArray();
                    foreach (string name in r.Runs.SelectMany(run => run.Metrics.Keys).Distinct())
                    {
                        w.WriteNumber(name, Math.Round(r.Metric(name), 3));
                    }
                }
                else
                {
                    foreach (string field in new[] { "wall_ms", "wall_ms_min", "wall_ms_max", "cpu_ms", "peak_ws_bytes", "allocated_bytes", "result_ok", "ns_per_op" })
                    {
                        w.WriteNull(field);
                    }
                }

                w.WriteNumber("runs", r.Runs.Count);
                w.WriteNumber("cold_runs", r.ColdRuns.Count);
                if (r.HasCold)
                {
                    w.WriteNumber("cold_wall_ms", Math.Round(r.ColdWallMs, 3));
                    w.WriteNumber("cold_cpu_ms", Math.Round(r.ColdCpuMs, 3));
                    w.WriteStartArray("cold_wall_ms_runs");
                    foreach (RunResult run in r.ColdRuns)
                    {
                        w.WriteNumberValue(Math.Round(run.WallMs, 3));
                    }

                    w.WriteEndArray();
                }
                else if (r.ColdNote is not null)
                {
                    w.WriteString("cold_note", r.ColdNote);
                }
                if (r.DeepestPassed is long deepest)
                {
                    w.WriteNumber("deepest_n", deepest);
                }

                if (r.FirstOverflow is long overflow)
                {
                    w.WriteNumber("first_overflow_n", overflow);
                }

                Row? baseline = r.HasData && r.Status == RowStatus.Ok ? Baseline(rows, r) : null;
                if (baseline is not null)
                {
                    w.WriteNumber("time_ratio_vs_myriad", Math.Round(TimeRatio(r, baseline), 4));
                    if (r.HasCold && baseline.HasCold)
                    {
                        w.WriteNumber("cold_time_ratio_vs_myriad", Math.Round(ColdTimeRatio(r, baseline), 4));
                    }

                    w.WriteNumber(r.Experiment.ComparePerOp ? "alloc_per_op_ratio_vs_myriad" : "peak_ws_ratio_vs_myriad", Math.Round(MemoryRatio(r, baseline), 4));
                }

                if (r.Note is not null)
                {
                    w.WriteString("note", r.Note);
                }

                w.WriteEndObject();
            }

            yield return Encoding.UTF8.GetString(stream.ToArray());
        }
    }

    /// <summary>Writes report.md and one SVG per experiment into <paramref name="dir"/>.</summary>
    public static void WriteFiles(string dir, IReadOnlyList<Row> rows, string header)
    {
        Directory.CreateDirectory(dir);
        var experiments = rows.Select(r => r.Experiment).Distinct().ToList();
        foreach (Experiment e in experiments)
        {
            File.WriteAllText(Path.Combine(dir, e.Id + ".svg"), Charts.Svg(rows, e));
        }

        var sb = new StringBuilder();
        sb.Append(header);
        sb.Append(Summary(rows));
        sb.Append(Tables(rows, e => e.Id + ".svg"));
        File.WriteAllText(Path.Combine(dir, "report.md"), sb.ToString());
    }
}
