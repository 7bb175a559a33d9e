using System;
using System.Collections.Generic;
using System.Globalization;

namespace Myriad.Compare.Experiments;

/// <summary>One size of an experiment: N, plus the mode and work per job where the experiment has them.</summary>
internal sealed record Case(long N, string Mode = "", int Work = 0)
{
    public string Label
    {
        get
        {
            string label = "n=" + Format.Count(N);
            if (Work > 0)
            {
                label += " work=" + Format.Count(Work);
            }

            if (Mode.Length > 0)
            {
                label += " " + Mode;
            }

            return label;
        }
    }

    /// <summary>Short label for charts and table rows.</summary>
    public string ShortLabel
    {
        get
        {
            string label = Format.Count(N);
            if (Work > 0)
            {
                label += " x " + Format.Count(Work);
            }

            if (Mode.Length > 0)
            {
                label += " (" + Mode + ")";
            }

            return label;
        }
    }

    public Case WithN(long n) => this with { N = n };
}

/// <summary>The code of a .NET variant: computes the experiment's result for a case.</summary>
internal delegate long Body(Case c);

internal enum VariantKind
{
    /// <summary>Runs in a child of this tool (<c>--child</c>).</summary>
    DotNet,

    /// <summary>Runs in <c>gobench</c>.</summary>
    Go,

    /// <summary>Runs in the NativeAOT build of the child (<c>bench/Myriad.Compare.Aot</c>), with the code of <see cref="Variant.Run"/>.</summary>
    Aot,

    /// <summary>Not available in this build (the report shows it as pending, with the reason).</summary>
    Pending,
}

internal sealed class Variant
{
    public required string Id { get; init; }

    public required string Description { get; init; }

    public VariantKind Kind { get; init; } = VariantKind.DotNet;

    /// <summary>The code (DotNet variants only).</summary>
    public Body? Run { get; init; }

    /// <summary>Why a pending variant cannot run.</summary>
    public string? PendingReason { get; init; }

    /// <summary>
    /// Recursion only: the variant is expected to die of a stack overflow at some depth. The tool
    /// probes increasing depths (each in its own child), reports the deepest that passed, and times that one.
    /// </summary>
    public bool ProbeDepth { get; init; }

    /// <summary>Sizes of this variant when they differ from the experiment's (recursion).</summary>
    public IReadOnlyList<Case>? DefaultCases { get; init; }

    /// <summary>Quick sizes of this variant when they differ from the experiment's.</summary>
    public IReadOnlyList<Case>? QuickCases { get; init; }

    public bool IsMyriad => Id == "myriad";

    /// <summary>Runs as a child of this tool (JIT) or of its NativeAOT build: the variant's code is a <see cref="Body"/>.</summary>
    public bool IsDotNet => Kind is VariantKind.DotNet or VariantKind.Aot;
}

internal sealed class Experiment
{
    public required string Id { get; init; }

    public required string Title { get; init; }

    /// <summary>What is measured, one paragraph (goes into the report).</summary>
    public required string Summary { get; init; }

    private List<Variant> _variants = [];

    public required IReadOnlyList<Variant> Variants { get => _variants; init => _variants = [.. value]; }

    /// <summary>Adds <paramref name="variant"/> right after <paramref name="after"/> (the catalog's myriad-aot variants).</summary>
    public void InsertAfter(Variant after, Variant variant) => _variants.Insert(_variants.IndexOf(after) + 1, variant);

    public required IReadOnlyList<Case> DefaultCases { get; init; }

    public required IReadOnlyList<Case> QuickCases { get; init; }

    /// <summary>The value a correct run computes.</summary>
    public required Func<Case, long> Expected { get; init; }

    /// <summary>Turns <c>--n</c> values into cases (keeps the experiment's modes and works).</summary>
    public Func<IReadOnlyList<long>, IReadOnlyList<Case>>? CasesForN { get; init; }

    /// <summary>Size of the warm-up run inside each child (a smaller size of the same case).</summary>
    public Func<Case, long> WarmupN { get; init; } = c => Math.Max(1, Math.Min(c.N / 2, 10_000));

    /// <summary>Fewest warm-up rounds inside a child (default 2; the sleepers, whose every round lasts a second, use 1).</summary>
    public int WarmupRounds { get; init; } = 2;

    /// <summary>
    /// Child processes per case when <c>--runs</c> is not given (null: the tool's default). Large
    /// cases of slow experiments run fewer times so that a full default run stays short.
    /// </summary>
    public Func<Case, int?> DefaultRuns { get; init; } = _ => null;

    /// <summary>Sizes differ per variant (recursion): compare time per operation rather than wall time.</summary>
    public bool ComparePerOp { get; init; }

    /// <summary>What one unit of N is, for the per-op column ("level", "link", "call"...).</summary>
    public string Unit { get; init; } = "op";

    /// <summary>The unit is one of the W per N (the echo's round trips: W per client), so per-op columns divide by N x W.</summary>
    public bool UnitIsWork { get; init; }

    /// <summary>Whether the report gives peak memory per <see cref="Unit"/> (experiments whose links all stay live until the end).</summary>
    public bool ReportsPeakPerUnit { get; init; }

    /// <summary>Whether the .NET children report the collector's pauses of the measured run (gc_pauses, gc_pause_total_ms, gc_pause_max_ms).</summary>
    public bool ReportsGcPauses { get; init; }

    public Variant? FindVariant(string id)
    {
        foreach (Variant v in Variants)
        {
            if (string.Equals(v.Id, id, StringComparison.Ordinal))
            {
                return v;
            }
        }

        return null;
    }

    public IReadOnlyList<Case> Cases(Variant variant, bool quick, IReadOnlyList<long>? sizes)
    {
        if (sizes is not { Count: > 0 })
        {
            IReadOnlyList<Case>? own = quick ? variant.QuickCases : variant.DefaultCases;
            if (own is not null)
            {
                return own;
            }
        }

        if (sizes is { Count: > 0 })
        {
            if (CasesForN is not null)
            {
                return CasesForN(sizes);
            }

            var list = new List<Case>();
            foreach (long n in sizes)
            {
                list.Add(new Case(n));
            }

            return list;
        }

        return quick ? QuickCases : DefaultCases;
    }
}

internal static class Format
{
    /// <summary>1000 -> "1k", 1000000 -> "1M", 1500 -> "1,500".</summary>
    public static string Count(long n)
    {
        if (n >= 1_000_000 && n % 1_000_000 == 0)
        {
            return (n / 1_000_000).ToString(CultureInfo.InvariantCulture) + "M";
        }

        if (n >= 1_000 && n % 1_000 == 0)
        {
            return (n / 1_000).ToString(CultureInfo.InvariantCulture) + "k";
        }

        if (n >= 1_000 && n < 1_000_000 && n % 100 == 0)
        {
            return (n / 1_000.0).ToString("0.0", CultureInfo.InvariantCulture) + "k";
        }

        return n.ToString("N0", CultureInfo.InvariantCulture);
    }

    public static string Ms(double ms)
    {
        if (double.IsNaN(ms))
        {
            return "-";
        }

        if (ms >= 10_000)
        {
            return (ms / 1000).ToString("0.0", CultureInfo.InvariantCulture) + " s";
        }

        if (ms >= 1_000)
        {
            return (ms / 1000).ToString("0.00", CultureInfo.InvariantCulture) + " s";
        }

        if (ms >= 100)
        {
            return ms.ToString("0", CultureInfo.InvariantCulture) + " ms";
        }

        if (ms >= 10)
        {
            return ms.ToString("0.0", CultureInfo.InvariantCulture) + " ms";
        }

        return ms.ToString("0.00", CultureInfo.InvariantCulture) + " ms";
    }

    public static string Bytes(double bytes)
    {
        if (double.IsNaN(bytes))
        {
            return "-";
        }

        const double KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;
        return bytes switch
        {
            >= GiB => (bytes / GiB).ToString("0.00", CultureInfo.InvariantCulture) + " GiB",
            >= 100 * MiB => (bytes / MiB).ToString("0", CultureInfo.InvariantCulture) + " MiB",
            >= MiB => (bytes / MiB).ToString("0.0", CultureInfo.InvariantCulture) + " MiB",
            >= KiB => (bytes / KiB).ToString("0.0", CultureInfo.InvariantCulture) + " KiB",
            _ => bytes.ToString("0", CultureInfo.InvariantCulture) + " B",
        };
    }

    /// <summary>Nanoseconds per operation, or bytes per operation, compactly.</summary>
    public static string PerOpNs(double ns)
    {
        if (double.IsNaN(ns) || double.IsInfinity(ns))
        {
            return "-";
        }

        if (ns >= 10_000)
        {
            return (ns / 1000).ToString("0", CultureInfo.InvariantCulture) + " us";
        }

        if (ns >= 1_000)
        {
            return (ns / 1000).ToString("0.0", CultureInfo.InvariantCulture) + " us";
        }

        return ns.ToString(ns >= 100 ? "0" : "0.0", CultureInfo.InvariantCulture) + " ns";
    }

    public static string PerOpBytes(double b)
    {
        if (double.IsNaN(b) || double.IsInfinity(b))
        {
            return "-";
        }

        return b.ToString(b >= 100 ? "0" : "0.0", CultureInfo.InvariantCulture) + " B";
    }

    public static string Ratio(double r)
    {
        if (double.IsNaN(r) || double.IsInfinity(r))
        {
            return "-";
        }

        return r.ToString(r >= 100 ? "0" : r >= 10 ? "0.0" : "0.00", CultureInfo.InvariantCulture) + "x";
    }

    public static string Inv(double d, string format = "0.###") => d.ToString(format, CultureInfo.InvariantCulture);
}
