using System;
using System.Collections.Generic;
using System.Linq;
using Myriad.Compare.Experiments;
using ScottPlot;
using ScottPlot.TickGenerators;

namespace Myriad.Compare;

/// <summary>
/// One SVG bar chart per experiment, drawn with ScottPlot: per size, one pair of bars per variant
/// (median warm wall time, solid; median cold wall time, pale). Log scale when the values span a
/// wide range; per-op experiments (recursion) chart time per level, grouped by the myriad run each
/// row is compared with.
/// </summary>
internal static class Charts
{
    private static readonly string[] Palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f", "#bab0ac"];
    private const string MyriadColor = "#2ca02c";
    private const string MyriadAotColor = "#17becf";

    /// <summary>Range of values (max / min) above which the value axis is logarithmic.</summary>
    private const double LogScaleSpan = 30;

    private const double BarWidth = 0.4;

    public static string Svg(IReadOnlyList<Row> all, Experiment e)
    {
        List<Row> rows = all.Where(r => r.Experiment == e).ToList();
        bool perOp = e.ComparePerOp;
        Func<Row, double> warm = perOp ? r => r.NsPerOp : r => r.WallMs;
        Func<Row, double> cold = perOp ? r => r.ColdNsPerOp : r => r.ColdWallMs;
        Func<double, string> label = perOp ? Format.PerOpNs : Format.Ms;

        string GroupOf(Row r) => perOp ? (Report.Baseline(all, r)?.Case.ShortLabel ?? r.Case.ShortLabel) : r.Case.ShortLabel;
        List<string> groups = rows
            .OrderBy(r => perOp ? (Report.Baseline(all, r)?.Case.N ?? r.Case.N) : 0)
            .Select(GroupOf).Distinct().ToList();
        List<Variant> variants = e.Variants.Where(v => rows.Any(r => r.Variant == v && r.HasData && r.Status == RowStatus.Ok)).ToList();
        var colors = new Dictionary<Variant, Color>();
        int next = 0;
        foreach (Variant v in variants)
        {
            colors[v] = Color.FromHex(v.IsMyriad ? MyriadColor : v.Kind == VariantKind.Aot ? MyriadAotColor : Palette[next++ % Palette.Length]);
        }

        var values = new List<double>();
        foreach (Row r in rows.Where(r => r.HasData && r.Status == RowStatus.Ok))
        {
            values.Add(warm(r));
            if (r.HasCold)
            {
                values.Add(cold(r));
            }
        }

        values.RemoveAll(v => !(v > 0));
        bool log = values.Count > 0 && values.Max() / values.Min() > LogScaleSpan;
        double floor = log && values.Count > 0 ? Math.Floor(Math.Log10(values.Min())) : 0;
        double Y(double v) => log ? Math.Log10(v) : v;

        var plot = new Plot();
        var bars = new List<Bar>();
        var ticks = new List<(double Position, string Label)>();
        double position = 0;
        foreach (string g in groups)
        {
            double start = position;
            foreach (Variant v in variants)
            {
                Row? r = rows.FirstOrDefault(r => r.Variant == v && GroupOf(r) == g && r.HasData && r.Status == RowStatus.Ok);
                if (r is null)
                {
                    continue;
                }

                bars.Add(NewBar(position - (BarWidth / 2), Y(warm(r)), log ? floor : 0, colors[v], label(warm(r))));
                if (r.HasCold)
                {
                    bars.Add(NewBar(position + (BarWidth / 2), Y(cold(r)), log ? floor : 0, colors[v].WithAlpha(0.4), label(cold(r))));
                }

                position += 1;
            }

            if (position > start)
            {
                ticks.Add(((start + position - 1) / 2, g));
                position += 0.8; // gap between sizes
            }
        }

        var barPlot = plot.Add.Bars(bars);
        barPlot.ValueLabelStyle.FontSize = 9;
        foreach (Variant v in variants)
        {
            plot.Legend.ManualItems.Add(new LegendItem { LabelText = v.Id, FillColor = colors[v] });
        }

        plot.Legend.ManualItems.Add(new LegendItem { LabelText = "pale: cold (no warm-up)", FillColor = Colors.Gray.WithAlpha(0.4) });
        plot.ShowLegend(Edge.Right);

        plot.Title($"{e.Id}: {e.Title} (lower is better)");
        string what = perOp ? $"median time per {e.Unit}" : "median wall time";
        plot.YLabel(what + (log ? ", log scale" : ""));
        plot.Axes.Bottom.TickGenerator = new NumericManual(ticks.Select(t => t.Position).ToArray(), ticks.Select(t => t.Label).ToArray());
        plot.Axes.Left.TickGenerator = log
            ? new NumericAutomatic { IntegerTicksOnly = true, MinorTickGenerator = new LogMinorTickGenerator(), LabelFormatter = y => label(Math.Pow(10, y)) }
            : new NumericAutomatic { LabelFormatter = label };
        if (values.Count > 0)
        {
            double top = log ? Math.Log10(values.Max()) + 0.6 : values.Max() * 1.25;
            plot.Axes.SetLimitsY(log ? floor : 0, top);
        }

        int width = Math.Max(720, 300 + (int)(position * 48));
        return plot.GetSvgXml(width, 420);
    }

    private static Bar NewBar(double position, double value, double valueBase, Color color, string text) => new()
    {
        Position = position,
        Value = value,
        ValueBase = valueBase,
        Size = BarWidth,
        FillColor = color,
        LineWidth = 0,
        Label = text,
    };
}
