using System;
using System.Globalization;
using System.Threading;
using Myriad.Compare.Experiments;

namespace Myriad.Compare;

/// <summary>
/// The child side (<c>--child</c>): runs one (experiment, variant, case) once after a warm-up at a
/// smaller size in the same process (none with <c>--warmup 0</c>: a cold run), measures it, prints
/// one JSON line. The NativeAOT build of the child (<c>bench/Myriad.Compare.Aot</c>) runs this too. Exit 0 ok, 3 wrong result,
/// 2 bad arguments.
/// </summary>
internal static class ChildHost
{
    public const string Flag = "--child";

    private const int WarmupMillis = 200;

    public static int Run(string[] args)
    {
        string? experimentId = null, variantId = null, mode = "";
        long n = -1, warmup = -1;
        int work = 0;
        for (int i = 0; i + 1 < args.Length; i += 2)
        {
            string value = args[i + 1];
            switch (args[i])
            {
                case "--experiment": experimentId = value; break;
                case "--variant": variantId = value; break;
                case "--n": n = long.Parse(value, CultureInfo.InvariantCulture); break;
                case "--mode": mode = value; break;
                case "--work": work = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--warmup": warmup = long.Parse(value, CultureInfo.InvariantCulture); break;
                case "--workers": Hosts.WorkerCount = int.Parse(value, CultureInfo.InvariantCulture); break;
                default:
                    Console.Error.WriteLine($"child: unknown argument {args[i]}");
                    return 2;
            }
        }

        Experiment? experiment = experimentId is null ? null : Catalog.Find(experimentId);
        Variant? variant = variantId is null ? null : experiment?.FindVariant(variantId);
        if (experiment is null || variant is null || variant.Run is null || n < 1)
        {
            Console.Error.WriteLine($"child: cannot run experiment '{experimentId}' variant '{variantId}' n={n}");
            return 2;
        }

        var measured = new Case(n, mode, work);
        Body body = variant.Run;

        long warmN = warmup >= 0 ? warmup : experiment.WarmupN(measured);
        if (warmN > 0)
        {
            // Warm up until the tiering compiler has caught up: at least two rounds, and more (with
            // pauses that leave the background compiler a core) until about 200 ms have passed.
            // Tier-0 code is several times slower than tier-1 code, and with dynamic PGO a method
            // goes through an instrumented tier first, so one short round is not enough.
            Case warm = measured.WithN(warmN);
            long want = experiment.Expected(warm);
            var warmClock = System.Diagnostics.Stopwatch.StartNew();
            for (int round = 0; round < experiment.WarmupRounds || (warmClock.ElapsedMilliseconds < WarmupMillis && round < 50); round++)
            {
                long got = body(warm);
                if (got != want)
                {
                    Console.Error.WriteLine($"child: warm-up of {experiment.Id}/{variant.Id} ({warm.Label}) computed {got}, expected {want}");
                    return 3;
                }

                Thread.Sleep(10);
            }
        }

        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        ChildMetrics.Clear();
        if (experiment.ReportsGcPauses)
        {
            ChildMetrics.RecordGcPauses();
        }

        ProcessSnapshot start = ProcessSnapshot.Take();
        long result = body(measured);
        ProcessSnapshot end = ProcessSnapshot.TakeEnd();

        // Test hook for the result check itself: MYRIAD_COMPARE_FAULT=experiment/variant corrupts that result.
        if (Environment.GetEnvironmentVariable("MYRIAD_COMPARE_FAULT") == experiment.Id + "/" + variant.Id)
        {
            result++;
        }

        long expected = experiment.Expected(measured);
        System.Collections.Generic.Dictionary<string, double> metrics = ChildMetrics.Collect();
        ChildMetrics.Clear();

        var r = new RunResult
        {
            Experiment = experiment.Id,
            Variant = variant.Id,
            Mode = mode,
            N = n,
            Work = work,
            WallMs = (end.Timestamp - start.Timestamp) * 1000.0 / System.Diagnostics.Stopwatch.Frequency,
            CpuMs = (end.Cpu - start.Cpu).TotalMilliseconds,
            PeakWsBytes = ProcessSnapshot.PeakWorkingSet(),
            AllocatedBytes = end.Allocated - start.Allocated,
            Result = result,
            Expected = expected,
            ResultOk = result == expected,
            Gen0 = end.Gen0 - start.Gen0,
            Gen1 = end.Gen1 - start.Gen1,
            Gen2 = end.Gen2 - start.Gen2,
            Metrics = metrics,
        };
        Console.Out.WriteLine(r.ToJson());
        Console.Out.Flush();
        if (!r.ResultOk)
        {
            Console.Error.WriteLine($"child: {experiment.Id}/{variant.Id} ({measured.Label}) computed {result}, expected {expected}");
            return 3;
        }

        return 0;
    }
}
