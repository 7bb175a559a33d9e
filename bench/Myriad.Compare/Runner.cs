using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using Myriad.Compare.Experiments;

namespace Myriad.Compare;

internal enum RowStatus
{
    Ok,
    Failed,
    Missing,
    Skipped,
    Pending,
    Overflow,
}

/// <summary>The aggregated measurements of one (experiment, variant, case).</summary>
internal sealed class Row
{
    public required Experiment Experiment { get; init; }

    public required Variant Variant { get; init; }

    public required Case Case { get; set; }

    public List<RunResult> Runs { get; } = [];

    public RowStatus Status { get; set; } = RowStatus.Ok;

    public string? Note { get; set; }

    /// <summary>Recursion probe: the deepest depth that passed, and the first that overflowed.</summary>
    public long? DeepestPassed { get; set; }

    public long? FirstOverflow { get; set; }

    public bool HasData => Runs.Count > 0;

    public double WallMs => Stats.Median(Runs.Select(r => r.WallMs).ToList());

    public double WallMin => Stats.Min(Runs.Select(r => r.WallMs).ToList());

    public double WallMax => Stats.Max(Runs.Select(r => r.WallMs).ToList());

    public double CpuMs => Stats.Median(Runs.Select(r => r.CpuMs).ToList());

    public double PeakWs => Stats.Median(Runs.Select(r => (double)r.PeakWsBytes).ToList());

    public double Allocated => Stats.Median(Runs.Select(r => (double)r.AllocatedBytes).ToList());

    public double NsPerOp => WallMs * 1e6 / Case.N;

    public double BytesPerOp => Allocated / Case.N;

    public bool? ResultOk => Runs.Count == 0 ? null : Runs.All(r => r.ResultOk);

    public string StatusText => Status switch
    {
        RowStatus.Ok => "ok",
        RowStatus.Failed => "failed",
        RowStatus.Missing => "missing",
        RowStatus.Skipped => "skipped",
        RowStatus.Pending => "pending",
        _ => "overflow",
    };
}

/// <summary>Runs the plan: every (experiment, variant, case), each run in a fresh child process; shows progress on stderr.</summary>
internal sealed class Runner(Options options)
{
    private static readonly long[] ProbeLadder = BuildLadder();

    private readonly List<string> _failures = [];
    private readonly bool _interactive = !Console.IsErrorRedirected;
    private string? _gobench;
    private string? _goProblem;
    private int _done;
    private int _total;

    public IReadOnlyList<string> Failures => _failures;

    public string GoDescription { get; private set; } = "not used";

    public List<Row> Rows { get; } = [];

    public void Run()
    {
        var plan = new List<Row>();
        foreach (Experiment e in options.Experiments)
        {
            foreach (Variant v in e.Variants)
            {
                if (options.Variants is not null && !options.Variants.Contains(v.Id))
                {
                    continue;
                }

                foreach (Case c in e.Cases(v, options.Quick, options.Sizes))
                {
                    plan.Add(new Row { Experiment = e, Variant = v, Case = c });
                }
            }
        }

        PrepareGo(plan);
        foreach (Row row in plan)
        {
            _total += row.Variant.Kind switch
            {
                VariantKind.Pending => 0,
                VariantKind.Go when _gobench is null => 0,
                _ => options.Runs + (row.Variant.ProbeDepth ? LadderFor(row.Case.N).Length : 0),
            };
        }

        foreach (Row row in plan)
        {
            Rows.Add(row);
            switch (row.Variant.Kind)
            {
                case VariantKind.Pending:
                    row.Status = RowStatus.Pending;
                    row.Note = row.Variant.PendingReason;
                    break;
                case VariantKind.Go when _gobench is null:
                    row.Status = options.NoGo ? RowStatus.Skipped : RowStatus.Missing;
                    row.Note = options.NoGo ? "--no-go" : _goProblem;
                    break;
                default:
                    if (row.Variant.ProbeDepth)
                    {
                        Probe(row);
                    }
                    else
                    {
                        Measure(row);
                    }

                    break;
            }
        }

        ClearProgress();
    }

    private void PrepareGo(List<Row> plan)
    {
        if (!plan.Any(r => r.Variant.Kind == VariantKind.Go))
        {
            return;
        }

        if (options.NoGo)
        {
            GoDescription = "skipped (--no-go)";
            return;
        }

        string? go = GoToolchain.FindGo();
        if (go is null)
        {
            _goProblem = "Go not installed: bash bench/go/install-go.sh";
            GoDescription = "missing";
            Console.Error.WriteLine("compare: " + GoToolchain.InstallHint);
            return;
        }

        string? root = GoToolchain.FindRepoRoot();
        if (root is null)
        {
            _goProblem = "repository root (Myriad.slnx) not found; run from the repository";
            GoDescription = "missing";
            Console.Error.WriteLine("compare: cannot build bench/go: " + _goProblem);
            return;
        }

        Console.Error.WriteLine($"compare: building bench/go with {go} ...");
        _gobench = GoToolchain.Build(root, go, out string? error);
        if (_gobench is null)
        {
            _goProblem = "go build failed";
            GoDescription = "missing (build failed)";
            Console.Error.WriteLine("compare: " + error);
            return;
        }

        GoDescription = GoToolchain.Version(go);
    }

    private void Measure(Row row)
    {
        ChildOutcome? failure = MeasureRuns(row);
        if (failure is not null)
        {
            Fail(row, row.Case, failure);
        }
    }

    /// <summary>Runs the row's R children; returns the first failing outcome (the rest of the runs are skipped).</summary>
    private ChildOutcome? MeasureRuns(Row row)
    {
        for (int run = 1; run <= options.Runs; run++)
        {
            ChildOutcome outcome = Launch(row, row.Case, $"run {run}/{options.Runs}");
            if (outcome.Result is not null)
            {
                row.Runs.Add(outcome.Result);
            }

            if (outcome.Status != ChildStatus.Ok)
            {
                _done += options.Runs - run;
                return outcome;
            }
        }

        return null;
    }

    /// <summary>
    /// Recursion: probe depths of the ladder (100, 200, 500, 1k, ...) up to the case's N, one child
    /// each, narrow the gap between the deepest pass and the first overflow by bisection, then time the
    /// deepest passing depth. The limit is not perfectly sharp (frame sizes change as methods tier up),
    /// so a timed run that overflows lowers the depth by 10% and starts the runs again.
    /// </summary>
    private void Probe(Row row)
    {
        long cap = row.Case.N;
        long[] ladder = LadderFor(cap);
        int probed = 0;
        foreach (long depth in ladder)
        {
            probed++;
            ChildStatus status = ProbeOnce(row, depth);
            if (status == ChildStatus.Ok)
            {
                row.DeepestPassed = depth;
                continue;
            }

            if (status != ChildStatus.StackOverflow)
            {
                _done += ladder.Length - probed + options.Runs;
                return;
            }

            row.FirstOverflow = depth;
            break;
        }

        _done += ladder.Length - probed;
        if (row.DeepestPassed is null)
        {
            row.Status = RowStatus.Overflow;
            row.Note = $"stack overflow already at n={Format.Count(ladder[0])}";
            _done += options.Runs;
            return;
        }

        // Bisect between the deepest pass and the first overflow, to about 5%.
        while (row.FirstOverflow is long hi && row.DeepestPassed is long lo && hi - lo > Math.Max(100, lo / 20))
        {
            long mid = (lo + hi) / 2 / 100 * 100;
            if (mid <= lo || mid >= hi)
            {
                break;
            }

            _total++;
            ChildStatus status = ProbeOnce(row, mid);
            if (status == ChildStatus.Ok)
            {
                row.DeepestPassed = mid;
            }
            else if (status == ChildStatus.StackOverflow)
            {
                row.FirstOverflow = mid;
            }
            else
            {
                _done += options.Runs;
                return;
            }
        }

        for (int attempt = 0; ; attempt++)
        {
            row.Case = row.Case.WithN(row.DeepestPassed!.Value);
            row.Runs.Clear();
            ChildOutcome? failure = MeasureRuns(row);
            if (failure is null)
            {
                break;
            }

            if (failure.Status != ChildStatus.StackOverflow || attempt >= 4 || row.Case.N <= 100)
            {
                Fail(row, row.Case, failure);
                return;
            }

            // The depth passed its probe but overflowed in a timed run: it is not reliable.
            row.FirstOverflow = Math.Min(row.FirstOverflow ?? long.MaxValue, row.Case.N);
            row.DeepestPassed = Math.Max(100, row.Case.N * 9 / 10 / 100 * 100);
            _total += options.Runs;
        }

        row.Note = row.FirstOverflow is long fail
            ? $"deepest depth that passed every run; n={Format.Count(fail)} died of a stack overflow"
            : $"passed every probed depth up to {Format.Count(row.Case.N)}";
    }

    /// <summary>One probe child at <paramref name="depth"/>: Ok, StackOverflow, or (anything else) a loud failure.</summary>
    private ChildStatus ProbeOnce(Row row, long depth)
    {
        Case c = row.Case.WithN(depth);
        ChildOutcome outcome = Launch(row, c, "probe");
        if (outcome.Status is not (ChildStatus.Ok or ChildStatus.StackOverflow))
        {
            Fail(row, c, outcome);
        }

        return outcome.Status;
    }

    private ChildOutcome Launch(Row row, Case c, string what)
    {
        _done++;
        Progress($"[{_done}/{_total}] {row.Experiment.Id} {row.Variant.Id} {c.Label} {what}");
        var args = new List<string>();
        string file;
        Dictionary<string, string>? env = null;
        if (row.Variant.Kind == VariantKind.Go)
        {
            file = _gobench!;
            args.AddRange(["-exp", row.Experiment.Id, "-n", c.N.ToString(CultureInfo.InvariantCulture)]);
            if (c.Work > 0)
            {
                args.AddRange(["-work", c.Work.ToString(CultureInfo.InvariantCulture)]);
            }

            if (c.Mode.Length > 0)
            {
                args.AddRange(["-mode", c.Mode]);
            }

            args.AddRange(["-warmup", row.Experiment.WarmupN(c).ToString(CultureInfo.InvariantCulture)]);
        }
        else
        {
            (file, List<string> prefix) = ChildRunner.SelfCommand();
            args.AddRange(prefix);
            args.AddRange([ChildHost.Flag, "--experiment", row.Experiment.Id, "--variant", row.Variant.Id, "--n", c.N.ToString(CultureInfo.InvariantCulture)]);
            if (c.Mode.Length > 0)
            {
                args.AddRange(["--mode", c.Mode]);
            }

            if (c.Work > 0)
            {
                args.AddRange(["--work", c.Work.ToString(CultureInfo.InvariantCulture)]);
            }

            // Tier up right after the warm-up's first calls instead of after the default 100 ms quiet period.
            env = new Dictionary<string, string> { ["DOTNET_TC_CallCountingDelayMs"] = "0" };
        }

        return ChildRunner.Run(file, args, options.Timeout, env);
    }

    private void Fail(Row row, Case c, ChildOutcome outcome)
    {
        row.Status = RowStatus.Failed;
        row.Note = outcome.Describe();
        string message = $"FAILED: {row.Experiment.Id} {row.Variant.Id} {c.Label}: {outcome.Describe()}";
        _failures.Add(message);
        ClearProgress();
        Console.Error.WriteLine("compare: " + message);
        if (outcome.StderrTail.Length > 0)
        {
            Console.Error.WriteLine("  child stderr: " + outcome.StderrTail.Replace("\n", "\n  ", StringComparison.Ordinal));
        }
    }

    private int _lastLength;

    private void Progress(string line)
    {
        if (_interactive)
        {
            string padded = line.Length < _lastLength ? line + new string(' ', _lastLength - line.Length) : line;
            Console.Error.Write("\r" + padded);
            _lastLength = line.Length;
        }
        else
        {
            Console.Error.WriteLine(line);
        }
    }

    private void ClearProgress()
    {
        if (_interactive && _lastLength > 0)
        {
            Console.Error.Write("\r" + new string(' ', _lastLength) + "\r");
            _lastLength = 0;
        }
    }

    /// <summary>100, 200, 500, 1k, 2k, 5k, ... below <paramref name="cap"/>, then the cap itself.</summary>
    private static long[] LadderFor(long cap) => ProbeLadder.Where(d => d < cap).Append(cap).ToArray();

    private static long[] BuildLadder()
    {
        var list = new List<long>();
        for (long decade = 100; decade <= 1_000_000_000; decade *= 10)
        {
            list.Add(decade);
            list.Add(decade * 2);
            list.Add(decade * 5);
        }

        return list.ToArray();
    }

    public static string Elapsed(Stopwatch sw) => Format.Ms(sw.Elapsed.TotalMilliseconds);
}
