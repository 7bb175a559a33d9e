using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Security;
using System.Text;
using Myriad.Compare.Experiments;

namespace Myriad.Compare;

/// <summary>Hand-written SVG bar charts: median wall time per variant, grouped by size; log scale when the values span a wide range.</summary>
internal static class Svg
{
    private static readonly string[] Palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1"];
    private const string MyriadColor = "#2ca02c";

    public static string Chart(IReadOnlyList<Row> all, Experiment e)
    {
        List<Row> rows = all.Where(r => r.Experiment == e).ToList();
        bool perOp = e.ComparePerOp;
        string valueName = perOp ? $"median time per {e.Unit}" : "median wall time";
        Func<Row, double> value = perOp ? r => r.NsPerOp : r => r.WallMs;
        Func<double, string> label = perOp ? Format.PerOpNs : Format.Ms;

        // Groups: the cases, in order of first appearance (per-op experiments: the myriad run each row is compared with).
        string GroupOf(Row r) => perOp ? (Report.Baseline(all, r)?.Case.ShortLabel ?? r.Case.ShortLabel) : r.Case.ShortLabel;
        var groups = new List<string>();
        foreach (Row r in rows.OrderBy(r => perOp ? (Report.Baseline(all, r)?.Case.N ?? r.Case.N) : 0))
        {
            string g = GroupOf(r);
            if (!groups.Contains(g))
            {
                groups.Add(g);
            }
        }

        var variants = e.Variants.Where(v => rows.Any(r => r.Variant == v)).ToList();
        var colors = new Dictionary<Variant, string>();
        int next = 0;
        foreach (Variant v in variants)
        {
            colors[v] = v.IsMyriad ? MyriadColor : Palette[next++ % Palette.Length];
        }

        var values = rows.Where(r => r.HasData && r.Status == RowStatus.Ok).Select(value).Where(x => x > 0).ToList();
        double min = values.Count > 0 ? values.Min() : 1, max = values.Count > 0 ? values.Max() : 1;
        bool log = values.Count > 0 && max / min > 30;

        const int barW = 22, barGap = 4, left = 80, right = 20, top = 60, plotH = 300, bottom = 70;
        int groupGap = perOp ? 80 : 36;
        int groupW = (variants.Count * (barW + barGap)) - barGap;
        string title = e.Id + ": " + e.Title;
        int width = Math.Max(Math.Max(420, left + (title.Length * 9)), left + right + (groups.Count * (groupW + groupGap)));
        int height = top + plotH + bottom;

        double lo, hi;
        if (log)
        {
            lo = Math.Pow(10, Math.Floor(Math.Log10(min)));
            hi = Math.Pow(10, Math.Ceiling(Math.Log10(max) + 0.3)); // headroom for the value labels
            if (hi <= lo)
            {
                hi = lo * 10;
            }
        }
        else
        {
            lo = 0;
            hi = NiceCeiling(max * 1.2);
        }

        double Y(double v)
        {
            double f = log ? (Math.Log10(v) - Math.Log10(lo)) / (Math.Log10(hi) - Math.Log10(lo)) : (v - lo) / (hi - lo);
            return top + plotH - (Math.Clamp(f, 0, 1) * plotH);
        }

        var sb = new StringBuilder();
        sb.AppendLine(CultureInfo.InvariantCulture, $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">");
        sb.AppendLine(CultureInfo.InvariantCulture, $"<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>");
        sb.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"{left}\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{X(title)}</text>");
        sb.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"{left}\" y=\"34\" fill=\"#555\">{X(valueName + (log ? ", log scale" : "") + "; lower is better")}</text>");

        // Legend.
        int lx = left;
        foreach (Variant v in variants)
        {
            sb.AppendLine(CultureInfo.InvariantCulture, $"<rect x=\"{lx}\" y=\"42\" width=\"10\" height=\"10\" fill=\"{colors[v]}\"/>");
            sb.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"{lx + 14}\" y=\"51\">{X(v.Id)}</text>");
            lx += 30 + (v.Id.Length * 8);
        }

        // Axis and grid.
        foreach (double tick in Ticks(lo, hi, log))
        {
            double y = Y(tick);
            sb.AppendLine(CultureInfo.InvariantCulture, $"<line x1=\"{left}\" y1=\"{y:0.#}\" x2=\"{width - right}\" y2=\"{y:0.#}\" stroke=\"#ddd\"/>");
            sb.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"{left - 6}\" y=\"{y + 4:0.#}\" text-anchor=\"end\" fill=\"#333\">{X(label(tick))}</text>");
        }

        sb.AppendLine(CultureInfo.InvariantCulture, $"<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{top + plotH}\" stroke=\"#333\"/>");
        sb.AppendLine(CultureInfo.InvariantCulture, $"<line x1=\"{left}\" y1=\"{top + plotH}\" x2=\"{width - right}\" y2=\"{top + plotH}\" stroke=\"#333\"/>");

        for (int g = 0; g < groups.Count; g++)
        {
            int gx = left + (groupGap / 2) + (g * (groupW + groupGap));
            for (int i = 0; i < variants.Count; i++)
            {
                Variant v = variants[i];
                int x = gx + (i * (barW + barGap));
                Row? r = rows.FirstOrDefault(r => r.Variant == v && GroupOf(r) == groups[g]);
                if (r is null)
                {
                    continue;
                }

                if (!r.HasData || r.Status != RowStatus.Ok)
                {
                    string why = r.Status switch { RowStatus.Pending => "pending", RowStatus.Missing => "missing", RowStatus.Skipped => "skipped", RowStatus.Overflow => "overflow", _ => "failed" };
                    sb.AppendLine(CultureInfo.InvariantCulture, $"<text transform=\"translate({x + (barW / 2) + 4},{top + plotH - 4}) rotate(-90)\" fill=\"#999\">{why}</text>");
                    continue;
                }

                double v0 = value(r);
                double y = Y(v0);
                double h = top + plotH - y;
                sb.AppendLine(CultureInfo.InvariantCulture, $"<rect x=\"{x}\" y=\"{y:0.#}\" width=\"{barW}\" height=\"{Math.Max(h, 1):0.#}\" fill=\"{colors[v]}\"><title>{X($"{v.Id} {r.Case.Label}: {label(v0)}")}</title></rect>");
                sb.AppendLine(CultureInfo.InvariantCulture, $"<text transform=\"translate({x + (barW / 2) + 4},{y - 3:0.#}) rotate(-90)\" font-size=\"9\">{X(label(v0))}</text>");
            }

            // Caption under the group: the size, and the mode on a second line; per-op charts name each bar's size.
            var lines = new List<string>();
            if (perOp)
            {
                foreach (Variant v in variants)
                {
                    Row? r = rows.FirstOrDefault(r => r.Variant == v && GroupOf(r) == groups[g]);
                    if (r is not null)
                    {
                        lines.Add($"{v.Id}: n={r.Case.ShortLabel}");
                    }
                }
            }
            else
            {
                int paren = groups[g].IndexOf(" (", StringComparison.Ordinal);
                lines.Add(paren < 0 ? groups[g] : groups[g][..paren]);
                if (paren >= 0)
                {
                    lines.Add(groups[g][(paren + 1)..]);
                }
            }

            for (int li = 0; li < lines.Count; li++)
            {
                sb.AppendLine(CultureInfo.InvariantCulture, $"<text x=\"{gx + (groupW / 2)}\" y=\"{top + plotH + 16 + (li * 14)}\" text-anchor=\"middle\">{X(lines[li])}</text>");
            }
        }

        sb.AppendLine("</svg>");
        return sb.ToString();
    }

    private static string X(string s) => SecurityElement.Escape(s) ?? "";

    private static double NiceCeiling(double v)
    {
        if (v <= 0)
        {
            return 1;
        }

        double p = Math.Pow(10, Math.Floor(Math.Log10(v)));
        foreach (double m in new[] { 1, 2, 2.5, 5, 10 })
        {
            if (m * p >= v)
            {
                return m * p;
            }
        }

        return 10 * p;
    }

    private static IEnumerable<double> Ticks(double lo, double hi, bool log)
    {
        if (log)
        {
            for (double t = lo; t <= hi * 1.0001; t *= 10)
            {
                yield return t;
            }
        }
        else
        {
            for (int i = 0; i <= 5; i++)
            {
                yield return lo + ((hi - lo) * i / 5);
            }
        }
    }
}
