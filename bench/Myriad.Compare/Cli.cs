using System;
using System.Collections.Generic;
using System.CommandLine;
using System.CommandLine.Help;
using System.Globalization;
using System.Linq;
using Myriad.Compare.Experiments;

namespace Myriad.Compare;

internal sealed class Options
{
    public List<Experiment> Experiments { get; } = [];

    /// <summary>Null: every variant.</summary>
    public HashSet<string>? Variants { get; set; }

    public List<long>? Sizes { get; set; }

    public int Runs { get; set; } = 5;

    /// <summary>Whether --runs was given (then it overrides the experiments' per-case defaults).</summary>
    public bool RunsGiven { get; set; }

    /// <summary>Cold child processes per row (no warm-up); at most <see cref="Runs"/> are used.</summary>
    public int ColdRuns { get; set; } = 3;

    public bool Quick { get; set; }

    public bool NoGo { get; set; }

    public bool NoAot { get; set; }

    public bool Json { get; set; }

    public string? OutDir { get; set; }

    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(180);

    /// <summary>Worker threads of the Myriad variants' <c>MultiThreadRuntime</c>s; null: one per core.</summary>
    public int? Workers { get; set; }

    public string CommandLine { get; set; } = "";
}

internal sealed class UsageException(string message) : Exception(message);

/// <summary>Command-line parsing (System.CommandLine) and the experiment list.</summary>
internal static class Cli
{
    private static readonly Option<string?> ExperimentOption = new("--experiment", "-e")
    {
        Description = "run only these experiments (default: all; see --list)",
        HelpName = "ID[,ID]",
    };

    private static readonly Option<string?> VariantOption = new("--variant")
    {
        Description = "run only these variants (e.g. myriad,go; --list shows the variants of each experiment: the TPL ones differ, such as tpl-run and tpl-startnew for spawn)",
        HelpName = "V[,V]",
    };

    private static readonly Option<string?> SizeOption = new("--n")
    {
        Description = "sizes instead of the defaults (suffixes k and M: 20k, 1M). tiny-tasks: ops, for each mode and each work of 1, 10, 100, 1000; async-overhead: calls, for both modes; worker-pool: items, for each shape and capacity; recursion: the depth (tpl probes up to it)",
        HelpName = "N[,N]",
    };

    private static readonly Option<int?> RunsOption = new("--runs")
    {
        Description = "warm child processes per (experiment, variant, size); default 5 (3 for the slowest large sizes), 1 with --quick",
        HelpName = "R",
    };

    private static readonly Option<int?> ColdRunsOption = new("--cold-runs")
    {
        Description = "cold child processes (no warm-up) per (experiment, variant, size), at most as many as warm ones; default 3, 1 with --quick; 0: none",
        HelpName = "C",
    };

    private static readonly Option<bool> QuickOption = new("--quick") { Description = "small sizes, one warm and one cold run (what CI runs, with --no-go)" };

    private static readonly Option<bool> NoGoOption = new("--no-go") { Description = "skip the Go variants" };

    private static readonly Option<bool> NoAotOption = new("--no-aot") { Description = "skip the NativeAOT variants (myriad-aot) and their publish step" };

    private static readonly Option<bool> JsonOption = new("--json") { Description = "one JSON object per (experiment, variant, size) on stdout instead of tables" };

    private static readonly Option<string?> OutOption = new("--out") { Description = "also write DIR/report.md and one SVG chart per experiment", HelpName = "DIR" };

    private static readonly Option<int> TimeoutOption = new("--timeout")
    {
        Description = "limit per child process, in seconds",
        HelpName = "SECONDS",
        DefaultValueFactory = _ => 180,
    };

    private static readonly Option<int?> WorkersOption = new("--workers")
    {
        Description = "worker threads of the Myriad variants' MultiThreadRuntime (default: one per core); TPL's pool and Go's GOMAXPROCS are left as they are",
        HelpName = "W",
    };

    private static readonly Option<bool> ListOption = new("--list") { Description = "list experiments and variants" };

    private static readonly RootCommand Root = new(
        "Myriad.Compare: the experiments of bench/README.md, TPL vs Myriad (JIT and NativeAOT) vs Go, each run in its own child process.\n" +
        "Usage: dotnet run -c Release --project bench/Myriad.Compare -- [options]   (or bash bench/compare.sh [options], which installs Go first)\n" +
        "Each child runs a warm-up at a smaller size, then the measured run; cold children measure at once. Every result is checked:\n" +
        "the tool exits 1 if any result is wrong or any child crashes, 2 on a usage error.")
    {
        ExperimentOption, VariantOption, SizeOption, RunsOption, ColdRunsOption, QuickOption, NoGoOption, NoAotOption,
        JsonOption, OutOption, TimeoutOption, WorkersOption, ListOption,
    };

    public static void PrintList()
    {
        foreach (Experiment e in Catalog.All)
        {
            Console.Out.WriteLine($"{e.Id}: {e.Title}");
            Console.Out.WriteLine($"  default sizes: {string.Join(", ", e.DefaultCases.Select(c => c.ShortLabel))}");
            foreach (Variant v in e.Variants)
            {
                string note = v.Kind == VariantKind.Pending ? " [pending: " + v.PendingReason + "]" : "";
                string sizes = v.DefaultCases is null ? "" : $" [default size {string.Join(", ", v.DefaultCases.Select(c => c.ShortLabel))}]";
                Console.Out.WriteLine($"  {v.Id,-14} {v.Description}{sizes}{note}");
            }
        }
    }

    /// <summary>Parses the options; null means help or the list was printed. Throws <see cref="UsageException"/> on bad input.</summary>
    public static Options? Parse(string[] args)
    {
        ParseResult result = Root.Parse(args);
        if (result.Action is HelpAction)
        {
            result.Invoke();
            return null;
        }

        if (result.Errors.Count > 0)
        {
            throw new UsageException(string.Join("; ", result.Errors.Select(e => e.Message)));
        }

        if (result.GetValue(ListOption))
        {
            PrintList();
            return null;
        }

        var o = new Options
        {
            CommandLine = string.Join(' ', args),
            Quick = result.GetValue(QuickOption),
            NoGo = result.GetValue(NoGoOption),
            NoAot = result.GetValue(NoAotOption),
            Json = result.GetValue(JsonOption),
            OutDir = result.GetValue(OutOption),
            Timeout = TimeSpan.FromSeconds(Check(result.GetValue(TimeoutOption), "--timeout", 1, 86_400)),
        };

        if (result.GetValue(RunsOption) is int runs)
        {
            o.Runs = Check(runs, "--runs", 1, 100);
            o.RunsGiven = true;
        }
        else if (o.Quick)
        {
            o.Runs = 1;
        }

        if (result.GetValue(ColdRunsOption) is int cold)
        {
            o.ColdRuns = Check(cold, "--cold-runs", 0, 100);
        }
        else if (o.Quick)
        {
            o.ColdRuns = 1;
        }

        if (result.GetValue(WorkersOption) is int workers)
        {
            o.Workers = Check(workers, "--workers", 1, 256);
        }

        if (result.GetValue(SizeOption) is string sizes)
        {
            o.Sizes = ParseSizes(sizes);
        }

        SelectExperiments(o, result.GetValue(ExperimentOption), result.GetValue(VariantOption));
        return o;
    }

    private static void SelectExperiments(Options o, string? experiments, string? variants)
    {
        if (experiments is null)
        {
            o.Experiments.AddRange(Catalog.All);
        }
        else
        {
            foreach (string id in SplitList(experiments))
            {
                Experiment e = Catalog.Find(id) ?? throw new UsageException(
                    $"unknown experiment '{id}'; known: {string.Join(", ", Catalog.All.Select(x => x.Id))}");
                if (!o.Experiments.Contains(e))
                {
                    o.Experiments.Add(e);
                }
            }
        }

        if (variants is not null)
        {
            o.Variants = [];
            foreach (string v in SplitList(variants))
            {
                if (!o.Experiments.Any(e => e.FindVariant(v) is not null))
                {
                    string known = string.Join("; ", o.Experiments.Select(e => e.Id + ": " + string.Join(", ", e.Variants.Select(x => x.Id))));
                    throw new UsageException($"unknown variant '{v}' for the selected experiments; known: {known}");
                }

                o.Variants.Add(v);
            }

            o.Experiments.RemoveAll(e => !e.Variants.Any(v => o.Variants.Contains(v.Id)));
        }

        if (o.NoGo && o.Variants is not null && o.Variants.All(v => v == "go"))
        {
            throw new UsageException("--no-go with --variant go leaves nothing to run");
        }

        if (o.NoAot && o.Variants is not null && o.Variants.All(v => v == Catalog.AotId))
        {
            throw new UsageException($"--no-aot with --variant {Catalog.AotId} leaves nothing to run");
        }
    }

    private static IEnumerable<string> SplitList(string value)
    {
        string[] parts = value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        if (parts.Length == 0)
        {
            throw new UsageException($"empty list '{value}'");
        }

        return parts;
    }

    private static int Check(int value, string option, int min, int max)
    {
        if (value < min || value > max)
        {
            throw new UsageException($"{option} must be a whole number from {min} to {max} (got {value})");
        }

        return value;
    }

    /// <summary>"1000", "1_000", "20k", "1M", comma-separated; each from 1 to int.MaxValue.</summary>
    public static List<long> ParseSizes(string value)
    {
        var sizes = new List<long>();
        foreach (string raw in SplitList(value))
        {
            string s = raw.Replace("_", "", StringComparison.Ordinal);
            long multiplier = 1;
            if (s.EndsWith('k') || s.EndsWith('K'))
            {
                multiplier = 1_000;
                s = s[..^1];
            }
            else if (s.EndsWith('M') || s.EndsWith('m'))
            {
                multiplier = 1_000_000;
                s = s[..^1];
            }

            if (!long.TryParse(s, NumberStyles.None, CultureInfo.InvariantCulture, out long n) || n < 1 || n > int.MaxValue / multiplier)
            {
                throw new UsageException($"bad size '{raw}': --n takes whole numbers from 1 to {int.MaxValue:N0} (suffixes k and M allowed)");
            }

            sizes.Add(n * multiplier);
        }

        return sizes;
    }
}
