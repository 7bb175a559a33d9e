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
    Unavailable,
}

/// <summary>The aggregated measurements of one (experiment, variant, case).</summary>
internal sealed class Row
{
    public required Experiment Experiment { get; init; }

    public required Variant Variant { get; init; }

    public required Case Case { get; set; }

    public List<RunResult> Runs { get; } = [];

    /// <summary>Cold runs: fresh processes measured at once, with no warm-up (and the stock tiering settings).</summary>
    public List<RunResult> ColdRuns { get; } = [];

    /// <summary>Why the row has no cold figure although it has warm ones (a cold probe depth that overflows).</summary>
    public string? ColdNote { get; set; }

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

    public bool HasCold => ColdRuns.Count > 0;

    public double ColdWallMs => Stats.Median(ColdRuns.Select(r => r.WallMs).ToList());

    public double ColdCpuMs => Stats.Median(ColdRuns.Select(r => r.CpuMs).ToList());

    public double ColdNsPerOp => ColdWallMs * 1e6 / Ops;

    /// <summary>How many of the experiment's units the row measures: N, or N x W where a unit is one of the W per N (<see cref="Experiment.UnitIsWork"/>).</summary>
    public long Ops => Experiment.UnitIsWork && Case.Work > 0 ? Case.N * Case.Work : Case.N;

    /// <summary>Whether any warm run reported the experiment-specific value <paramref name="name"/>.</summary>
    public bool HasMetric(string name) => Runs.Any(r => r.Metrics.ContainsKey(name));

    /// <summary>Median of an experiment-specific value over the warm runs (NaN if no run reported it).</summary>
    public double Metric(string name) => Stats.Median(Runs.Where(r => r.Metrics.ContainsKey(name)).Select(r => r.Metrics[name]).ToList());

    public double NsPerOp => WallMs * 1e6 / Ops;

    public double BytesPerOp => Allocated / Ops;

    public bool? ResultOk => Runs.Count == 0 ? null : Runs.All(r => r.ResultOk);

    public string StatusText => Status switch
    {
        RowStatus.Ok => "ok",
        RowStatus.Failed => "failed",
        RowStatus.Missing => "missing",
        RowStatus.Skipped => "skipped",
        RowStatus.Pending => "pending",
        RowStatus.Unavailable => "unavailable",
        _ => "overflow",
    };
}

/// <summary>
/// Runs the plan: every (experiment, variant, case), each run in a fresh child process (warm runs,
/// then cold runs), and shows progress on stderr.
/// </summary>
internal sealed class Runner(Options options)
{
    private static readonly long[] ProbeLadder = BuildLadder();

    private readonly List<string> _failures = [];
    private string? _gobench;
    private string? _goProblem;
    private string? _aotChild;
    private string? _aotProblem;
    private ProgressDisplay _progress = null!;
    private int _done;
    private int _total;

    public IReadOnlyList<string> Failures => _failures;

    public string GoDescription { get; private set; } = "not used";

    public string AotDescription { get; private set; } = "not used";

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

        using (_progress = ProgressDisplay.Create())
        {
            PrepareGo(plan);
            PrepareAot(plan);
            foreach (Row row in plan)
            {
                _total += row.Variant.Kind switch
                {
                    VariantKind.Pending => 0,
                    VariantKind.Go when _gobench is null => 0,
                    VariantKind.Aot when _aotChild is null => 0,
                    _ => WarmRuns(row) + ColdRuns(row) + (row.Variant.ProbeDepth ? LadderFor(row.Case.N).Length : 0),
                };
            }

            _progress.Run(_total, () => Execute(plan));
        }
    }

    private void Execute(List<Row> plan)
    {
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
                case VariantKind.Aot when _aotChild is null:
                    row.Status = options.NoAot ? RowStatus.Skipped : RowStatus.Unavailable;
                    row.Note = options.NoAot ? "--no-aot" : _aotProblem;
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
    }

    /// <summary>Warm child processes for the row: --runs, or the experiment's default for the case (fewer for slow large cases).</summary>
    private int WarmRuns(Row row) =>
        options.RunsGiven || options.Quick ? options.Runs : row.Experiment.DefaultRuns(row.Case) ?? options.Runs;

    /// <summary>Cold child processes for the row: --cold-runs, at most as many as warm ones.</summary>
    private int ColdRuns(Row row) => Math.Min(options.ColdRuns, WarmRuns(row));

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
            _progress.Message("compare: " + GoToolchain.InstallHint);
            return;
        }

        string? root = GoToolchain.FindRepoRoot();
        if (root is null)
        {
            _goProblem = "repository root (Myriad.slnx) not found; run from the repository";
            GoDescription = "missing";
            _progress.Message("compare: cannot build bench/go: " + _goProblem);
            return;
        }

        _progress.Message($"compare: building bench/go with {go} ...");
        _gobench = GoToolchain.Build(root, go, out string? error);
        if (_gobench is null)
        {
            _goProblem = "go build failed";
            GoDescription = "missing (build failed)";
            _progress.Message("compare: " + error);
            return;
        }

        GoDescription = GoToolchain.Version(go);
    }

    private void PrepareAot(List<Row> plan)
    {
        if (!plan.Any(r => r.Variant.Kind == VariantKind.Aot))
        {
            return;
        }

        if (options.NoAot)
        {
            AotDescription = "skipped (--no-aot)";
            return;
        }

        _progress.Message("compare: publishing bench/Myriad.Compare.Aot with NativeAOT (dotnet publish) ...");
        var clock = Stopwatch.StartNew();
        _aotChild = AotChild.Publish(out string? problem);
        if (_aotChild is null)
        {
            _aotProblem = problem;
            AotDescription = "unavailable: " + problem;
            _progress.Message("compare: NativeAOT variant unavailable: " + problem);
            return;
        }

        AotDescription = $"NativeAOT child published in {Format.Ms(clock.Elapsed.TotalMilliseconds)}";
    }

    private void Measure(Row row)
    {
        ChildOutcome? failure = MeasureWarm(row);
        if (failure is not null)
        {
            Fail(row, row.Case, failure);
            Skip(ColdRuns(row));
            return;
        }

        MeasureCold(row);
    }

    /// <summary>Runs the row's warm children; returns the first failing outcome (the rest of the runs are skipped).</summary>
    private ChildOutcome? MeasureWarm(Row row)
    {
        int runs = WarmRuns(row);
        for (int run = 1; run <= runs; run++)
        {
            ChildOutcome outcome = Launch(row, row.Case, $"run {run}/{runs}", cold: false);
            if (outcome.Result is not null)
            {
                row.Runs.Add(outcome.Result);
            }

            if (outcome.Status != ChildStatus.Ok)
            {
                Skip(runs - run);
                return outcome;
            }
        }

        return null;
    }

    /// <summary>
    /// Runs the row's cold children (no warm-up). A cold probe row may overflow where the warm one
    /// passed (tier-0 frames are larger): that is noted, not a failure.
    /// </summary>
    private void MeasureCold(Row row)
    {
        int runs = ColdRuns(row);
        for (int run = 1; run <= runs; run++)
        {
            ChildOutcome outcome = Launch(row, row.Case, $"cold {run}/{runs}", cold: true);
            if (outcome.Status == ChildStatus.Ok && outcome.Result is not null)
            {
                row.ColdRuns.Add(outcome.Result);
                continue;
            }

            Skip(runs - run);
            if (row.Variant.ProbeDepth && outcome.Status == ChildStatus.StackOverflow)
            {
                row.ColdNote = "stack overflow when cold (tier-0 frames are larger)";
                row.ColdRuns.Clear();
                return;
            }

            Fail(row, row.Case, outcome, "cold ");
            return;
        }
    }

    private void Skip(int children)
    {
        _done += children;
        _progress.Skip(children);
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
        int measured = WarmRuns(row) + ColdRuns(row);
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
                Skip(ladder.Length - probed + measured);
                return;
            }

            row.FirstOverflow = depth;
            break;
        }

        Skip(ladder.Length - probed);
        if (row.DeepestPassed is null)
        {
            row.Status = RowStatus.Overflow;
            row.Note = $"stack overflow already at n={Format.Count(ladder[0])}";
            Skip(measured);
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

            AddTotal(1);
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
                Skip(measured);
                return;
            }
        }

        for (int attempt = 0; ; attempt++)
        {
            row.Case = row.Case.WithN(row.DeepestPassed!.Value);
            row.Runs.Clear();
            ChildOutcome? failure = MeasureWarm(row);
            if (failure is null)
            {
                break;
            }

            if (failure.Status != ChildStatus.StackOverflow || attempt >= 4 || row.Case.N <= 100)
            {
                Fail(row, row.Case, failure);
                Skip(ColdRuns(row));
                return;
            }

            // The depth passed its probe but overflowed in a timed run: it is not reliable.
            row.FirstOverflow = Math.Min(row.FirstOverflow ?? long.MaxValue, row.Case.N);
            row.DeepestPassed = Math.Max(100, row.Case.N * 9 / 10 / 100 * 100);
            AddTotal(WarmRuns(row));
        }

        row.Note = row.FirstOverflow is long fail
            ? $"deepest depth that passed every run; n={Format.Count(fail)} died of a stack overflow"
            : $"passed every probed depth up to {Format.Count(row.Case.N)}";
        MeasureCold(row);
    }

    private void AddTotal(int children)
    {
        _total += children;
        _progress.AddTotal(children);
    }

    /// <summary>One probe child at <paramref name="depth"/>: Ok, StackOverflow, or (anything else) a loud failure.</summary>
    private ChildStatus ProbeOnce(Row row, long depth)
    {
        Case c = row.Case.WithN(depth);
        ChildOutcome outcome = Launch(row, c, "probe", cold: false);
        if (outcome.Status is not (ChildStatus.Ok or ChildStatus.StackOverflow))
        {
            Fail(row, c, outcome);
        }

        return outcome.Status;
    }

    private ChildOutcome Launch(Row row, Case c, string what, bool cold)
    {
        _done++;
        _progress.Step($"[{_done}/{_total}] {row.Experiment.Id} {row.Variant.Id} {c.Label} {what}");
        var args = new List<string>();
        string file;
        Dictionary<string, string>? env = null;
        long warmup = cold ? 0 : row.Experiment.WarmupN(c);
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

            args.AddRange(["-warmup", warmup.ToString(CultureInfo.InvariantCulture)]);
        }
        else
        {
            List<string> prefix;
            if (row.Variant.Kind == VariantKind.Aot)
            {
                (file, prefix) = (_aotChild!, []);
            }
            else
            {
                (file, prefix) = ChildRunner.SelfCommand();
            }

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

            args.AddRange(["--warmup", warmup.ToString(CultureInfo.InvariantCulture)]);
            if (options.Workers is int workers)
            {
                args.AddRange(["--workers", workers.ToString(CultureInfo.InvariantCulture)]);
            }

            // Warm runs: tier up right after the warm-up's first calls instead of after the default
            // 100 ms quiet period. Cold runs keep the stock settings, as a one-shot program has them.
            if (!cold)
            {
                env = new Dictionary<string, string> { ["DOTNET_TC_CallCountingDelayMs"] = "0" };
            }
        }

        return ChildRunner.Run(file, args, options.Timeout, env);
    }

    private void Fail(Row row, Case c, ChildOutcome outcome, string what = "")
    {
        row.Status = RowStatus.Failed;
        row.Note = what + outcome.Describe();
        string message = $"FAILED: {row.Experiment.Id} {row.Variant.Id} {c.Label}: {what}{outcome.Describe()}";
        _failures.Add(message);
        _progress.Message("compare: " + message);
        if (outcome.StderrTail.Length > 0)
        {
            _progress.Message("  child stderr: " + outcome.StderrTail.Replace("\n", "\n  ", StringComparison.Ordinal));
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
}
