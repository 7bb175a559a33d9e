using System;
using System.Collections.Generic;
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

    public bool Quick { get; set; }

    public bool NoGo { get; set; }

    public bool Json { get; set; }

    public string? OutDir { get; set; }

    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(180);

    public string CommandLine { get; set; } = "";
}

internal sealed class UsageException(string message) : Exception(message);

/// <summary>Command-line parsing and help.</summary>
internal static class Cli
{
    public static void PrintHelp()
    {
        Console.Out.WriteLine(
            """
            Myriad.Compare: the five experiments (plus ping-pong), TPL vs Myriad vs Go, each in its own child process.

            Usage: dotnet run -c Release --project bench/Myriad.Compare -- [options]
                   bash bench/compare.sh [options]          (installs Go first when it can)

            Options:
              --experiment ID[,ID]  run only these experiments (default: all)
              --variant V[,V]       run only these variants (e.g. tpl,myriad,go)
              --n N[,N]             sizes instead of the defaults (suffixes k and M allowed: 20k, 1M).
                                    tiny-tasks: ops, for each mode and each work of 1, 10, 100, 1000;
                                    async-overhead: calls, for both modes; recursion: the depth (tpl probes up to it)
              --runs R              child processes per (experiment, variant, size); default 5
              --quick               small sizes, one run (what CI runs, with --no-go)
              --no-go               skip the Go variants
              --json                one JSON object per (experiment, variant, size) on stdout instead of tables
              --out DIR             also write DIR/report.md and one SVG chart per experiment
              --timeout SECONDS     limit per child process (default 180)
              --list                list experiments and variants
              -h, --help            this help

            Each child runs a warm-up at a smaller size, then the measured run, and checks its result;
            the tool exits 1 if any result is wrong or any child crashes, 2 on a usage error.
            """);
    }

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

    /// <summary>Parses the options; null means help or list was printed.</summary>
    public static Options? Parse(string[] args)
    {
        var o = new Options { CommandLine = string.Join(' ', args) };
        string? experiments = null, variants = null;
        bool runsGiven = false;
        for (int i = 0; i < args.Length; i++)
        {
            string arg = args[i];
            string? inline = null;
            int eq = arg.IndexOf('=', StringComparison.Ordinal);
            if (arg.StartsWith("--", StringComparison.Ordinal) && eq > 0)
            {
                inline = arg[(eq + 1)..];
                arg = arg[..eq];
            }

            string Value()
            {
                if (inline is not null)
                {
                    return inline;
                }

                if (i + 1 >= args.Length)
                {
                    throw new UsageException($"{arg} needs a value");
                }

                return args[++i];
            }

            switch (arg)
            {
                case "-h":
                case "--help":
                    PrintHelp();
                    return null;
                case "--list":
                    PrintList();
                    return null;
                case "--experiment":
                case "-e":
                    experiments = Value();
                    break;
                case "--variant":
                    variants = Value();
                    break;
                case "--n":
                    o.Sizes = ParseSizes(Value());
                    break;
                case "--runs":
                    o.Runs = ParseInt(Value(), "--runs", 1, 100);
                    runsGiven = true;
                    break;
                case "--quick":
                    o.Quick = true;
                    break;
                case "--no-go":
                    o.NoGo = true;
                    break;
                case "--json":
                    o.Json = true;
                    break;
                case "--out":
                    o.OutDir = Value();
                    break;
                case "--timeout":
                    o.Timeout = TimeSpan.FromSeconds(ParseInt(Value(), "--timeout", 1, 86_400));
                    break;
                default:
                    throw new UsageException($"unknown option '{args[i]}' (see --help)");
            }
        }

        if (o.Quick && !runsGiven)
        {
            o.Runs = 1;
        }

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

        return o;
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

    private static int ParseInt(string value, string option, int min, int max)
    {
        if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out int v) || v < min || v > max)
        {
            throw new UsageException($"{option} must be a whole number from {min} to {max} (got '{value}')");
        }

        return v;
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
