using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Text;
using Myriad.Compare;
using Myriad.Compare.Experiments;

if (args.Length > 0 && args[0] == ChildHost.Flag)
{
    return ChildHost.Run(args[1..]);
}

Options? options;
try
{
    options = Cli.Parse(args);
}
catch (UsageException e)
{
    Console.Error.WriteLine("compare: " + e.Message);
    Console.Error.WriteLine("Try --help.");
    return 2;
}

if (options is null)
{
    return 0;
}

var clock = Stopwatch.StartNew();
var runner = new Runner(options);
runner.Run();
clock.Stop();

string header = Header(options, runner, clock.Elapsed);
if (options.Json)
{
    foreach (string line in Report.JsonLines(runner.Rows))
    {
        Console.Out.WriteLine(line);
    }
}
else
{
    Console.Out.Write(header);
    Console.Out.Write(Report.Summary(runner.Rows));
    Console.Out.Write(Report.Tables(runner.Rows));
}

if (options.OutDir is not null)
{
    Report.WriteFiles(options.OutDir, runner.Rows, header);
    Console.Error.WriteLine($"compare: wrote {Path.Combine(options.OutDir, "report.md")} and {runner.Rows.Select(r => r.Experiment).Distinct().Count()} SVG charts");
}

Console.Error.WriteLine($"compare: done in {Format.Ms(clock.Elapsed.TotalMilliseconds)}");
if (runner.Failures.Count > 0)
{
    Console.Error.WriteLine($"compare: {runner.Failures.Count} FAILURE(S):");
    foreach (string f in runner.Failures)
    {
        Console.Error.WriteLine("  " + f);
    }

    return 1;
}

return 0;

static string Header(Options o, Runner runner, TimeSpan elapsed)
{
    var sb = new StringBuilder();
    sb.AppendLine("## Myriad compare report");
    sb.AppendLine();
    sb.AppendLine($"- machine: {Environment.ProcessorCount} cores, {RuntimeInformation.OSDescription.Trim()} {RuntimeInformation.OSArchitecture}, {RuntimeInformation.FrameworkDescription}; Go: {runner.GoDescription}; NativeAOT: {runner.AotDescription}");
    sb.AppendLine($"- date: {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC; command: `compare {o.CommandLine}`; total time {Format.Ms(elapsed.TotalMilliseconds)}");
    string runs = o.RunsGiven || o.Quick ? o.Runs.ToString(System.Globalization.CultureInfo.InvariantCulture) : $"{o.Runs} (3 for the largest sizes of the slowest experiments)";
    sb.AppendLine($"- every (experiment, variant, size) ran in {runs} fresh child process(es), each after a warm-up at a smaller size, and in up to {o.ColdRuns} cold one(s) (no warm-up, stock tiering settings); median of the runs, spread = min - max of warm wall time. CPU = process user+sys time during the measured run; peak WS = whole-process VmHWM; allocated = managed bytes (Go: heap bytes) allocated during the measured run.");
    sb.AppendLine();
    return sb.ToString();
}
