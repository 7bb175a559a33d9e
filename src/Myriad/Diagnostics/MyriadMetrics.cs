using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Threading;
using Myriad.Scheduling;

namespace Myriad.Diagnostics;

/// <summary>
/// Myriad's metrics, published through <see cref="System.Diagnostics.Metrics"/> under the meter
/// named <see cref="MeterName"/> (listen with <c>dotnet-counters monitor --counters Myriad</c>, an
/// OpenTelemetry exporter, or a <see cref="MeterListener"/>). Every instrument is observable: the
/// runtimes keep plain counters and nothing is computed until a listener asks, so metrics cost the
/// scheduler nothing when nobody listens. Each measurement carries a <c>myriad.runtime</c> tag with
/// the runtime's <see cref="JobRuntime.Name"/>; runtimes that share a name are summed into one series.
/// </summary>
/// <remarks>
/// A disposed runtime keeps being reported for <see cref="DisposedRuntimeRetention"/> after its
/// disposal started, so that the last values a tool shows are its final ones (<c>myriad.jobs.active</c>
/// back at 0 once it drained) rather than whatever the last collection before the disposal read: a
/// series that simply stops leaves <c>dotnet-counters</c> showing its last value for good.
/// </remarks>
public static class MyriadMetrics
{
    /// <summary>The name of the meter.</summary>
    public const string MeterName = "Myriad";

    private static readonly ConcurrentDictionary<JobRuntime, byte> s_runtimes = new();
    private static readonly Meter s_meter = new(MeterName, typeof(MyriadMetrics).Assembly.GetName().Version?.ToString());

    static MyriadMetrics()
    {
        // The kinds follow OpenTelemetry's semantic conventions: cumulative counts are counters, and
        // current counts are up-down counters rather than gauges because they are additive: a name's
        // series is already the sum over its runtimes, and a sum over names (or over the tag dropped)
        // is a meaningful total, which the conventions give to up-down counters (like .NET's own
        // dotnet.thread_pool.queue.length); an exporter that aggregates would average a gauge or keep
        // its last value. The queue length and worker counts were gauges before; names, units and tags
        // stay as they were, since dashboards and queries find the series by them.
        s_meter.CreateObservableCounter("myriad.jobs.spawned", () => Measure(static r => r.Spawned), "{job}", "The number of jobs spawned on the runtime.");
        s_meter.CreateObservableCounter("myriad.jobs.completed", () => Measure(static r => r.Completed), "{job}", "The number of spawned jobs that have completed.");
        s_meter.CreateObservableUpDownCounter("myriad.jobs.active", () => Measure(static r => r.Active), "{job}", "The number of spawned jobs that have not completed yet.");
        s_meter.CreateObservableCounter(
            "myriad.jobs.unobserved_exceptions",
            () => Measure(static r => r.Unobserved),
            "{exception}",
            "The number of exceptions reported through JobRuntime.UnobservedException: failures nobody could observe, such as those of detached jobs, of jobs that lost a Job.WhenAny race, and of a scope's children that nobody awaited.");
        s_meter.CreateObservableUpDownCounter("myriad.scheduler.queue.length", () => Measure(static r => r.Stats.QueuedItems), "{item}", "The number of items currently waiting in the runtime's queues.");
        s_meter.CreateObservableUpDownCounter("myriad.scheduler.workers.parked", () => Measure(static r => r.Stats.ParkedWorkers), "{worker}", "The number of workers currently asleep, waiting for work.");
        s_meter.CreateObservableUpDownCounter("myriad.scheduler.workers.searching", () => Measure(static r => r.Stats.SearchingWorkers), "{worker}", "The number of workers currently looking for work to steal from other workers.");
        s_meter.CreateObservableCounter("myriad.scheduler.steals", () => Measure(static r => r.Stats.Steals), "{steal}", "The number of successful steals of work between workers.");
        s_meter.CreateObservableCounter("myriad.scheduler.parks", () => Measure(static r => r.Stats.Parks), "{park}", "The number of times a worker went to sleep.");
    }

    internal static void Register(JobRuntime runtime)
    {
        lock (RetiredRuntimes.Gate)
        {
            if (s_runtimes.TryAdd(runtime, 0))
            {
                RetiredRuntimes.Registered(runtime.Name); // refreshes the list first, before the new runtime counts as its name's
            }
        }
    }

    /// <summary>
    /// How long a disposed runtime stays in the measurements. Default 2 minutes: longer than the
    /// 60-second default export interval of OpenTelemetry's periodic metric reader, so that every
    /// exporter with default settings collects the final values at least once (<c>dotnet-counters</c>
    /// collects every second). <see cref="TimeSpan.Zero"/> drops a runtime as soon as it is disposed.
    /// A new runtime with the same name ends a disposed one's retention at once: the series are
    /// tagged by name, and the tag then reports the new runtime, its counters continuing from the
    /// disposed one's totals. A counter of a name never goes down while the name has a runtime
    /// measured (a disposed runtime's totals stay in its name's series when a namesake outlives its
    /// retention); once none is left, the series ends, and a runtime of that name created later,
    /// even the next instant after the retention passed, starts a new series at 0 (whether or not
    /// anything collected, created or disposed a runtime in between).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public static TimeSpan DisposedRuntimeRetention
    {
        get => TimeSpan.FromMilliseconds(Volatile.Read(ref s_retentionMilliseconds));
        set
        {
            if (value < TimeSpan.Zero)
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "DisposedRuntimeRetention must not be negative.");
            }

            Volatile.Write(ref s_retentionMilliseconds, (long)Math.Ceiling(value.TotalMilliseconds));
        }
    }

    private static long s_retentionMilliseconds = (long)TimeSpan.FromMinutes(2).TotalMilliseconds;

    internal static long RetentionMilliseconds => Volatile.Read(ref s_retentionMilliseconds);

    /// <summary>
    /// Spawned minus completed, never negative. Completions are read first: every completion counted
    /// then has its spawn counted by the later read, whereas reading spawns first lets jobs spawned and
    /// finished in between count as completed only (it read -7,000 under four spawning threads). The
    /// counters are striped sums read racily, hence the clamp as well.
    /// </summary>
    internal static long ActiveJobs(JobRuntime runtime)
    {
        long completed = runtime.CompletedCount;
        return Math.Max(0, runtime.SpawnedCount - completed);
    }

    /// <summary>
    /// Disposal finished (the drain is over): the retired list is refreshed at once, so that the
    /// runtime's entry keeps only its final counts (or leaves, with a retention of zero). Otherwise
    /// only a later registration or collection refreshed it, and in a process that neither creates
    /// another runtime nor collects metrics the last disposed runtime stayed reachable for good.
    /// The refresh looks at the expired entries and the disposals in progress, not at every entry
    /// (see <see cref="RetiredRuntimes"/>' remarks on cost).
    /// </summary>
    internal static void DisposalCompleted()
    {
        lock (RetiredRuntimes.Gate)
        {
            RetiredRuntimes.DisposalCompleted();
        }
    }

    /// <summary>Disposal started: the runtime moves to the retired list, still measured for a while.</summary>
    internal static void Unregister(JobRuntime runtime)
    {
        lock (RetiredRuntimes.Gate)
        {
            if (s_runtimes.TryRemove(runtime, out _))
            {
                RetiredRuntimes.Add(runtime);
            }
        }
    }

    /// <summary>
    /// One measurement per runtime name. Runtimes that share a name (two hosts in one process
    /// configured alike, say, or a runtime disposed while a namesake runs) share one series, summed:
    /// tools keep one value per tag set, so two measurements with the same tag in one collection
    /// would overwrite each other and show one runtime's values as the name's.
    /// </summary>
    private static IEnumerable<Measurement<long>> Measure(Func<RuntimeReading, long> read)
    {
        var sums = new Dictionary<string, long>(StringComparer.Ordinal);
        lock (RetiredRuntimes.Gate)
        {
            foreach (JobRuntime runtime in s_runtimes.Keys)
            {
                Add(sums, runtime.Name, read(new RuntimeReading(runtime)));
            }

            RetiredRuntimes.Refresh();
            foreach (RetiredRuntime retired in RetiredRuntimes.Entries)
            {
                Add(sums, retired.Name, read(retired.Reading));
            }

            foreach (KeyValuePair<string, RuntimeTotals> carried in RetiredRuntimes.Carried)
            {
                Add(sums, carried.Key, read(new RuntimeReading(carried.Value, carried: true)));
            }
        }

        var measurements = new Measurement<long>[sums.Count];
        int i = 0;
        foreach (KeyValuePair<string, long> sum in sums)
        {
            measurements[i++] = new Measurement<long>(sum.Value, Tag(sum.Key));
        }

        return measurements;
    }

    private static void Add(Dictionary<string, long> sums, string name, long value) =>
        sums[name] = sums.GetValueOrDefault(name) + value;

    private static KeyValuePair<string, object?> Tag(string name) => new("myriad.runtime", name);
}

/// <summary>A point-in-time view of a runtime's scheduler, for metrics and diagnostics.</summary>
/// <param name="QueuedItems">Items in the runtime's queues (all workers' queues and slots, and the global queue).</param>
/// <param name="ParkedWorkers">Workers asleep.</param>
/// <param name="SearchingWorkers">Workers looking for work in others' queues.</param>
/// <param name="Steals">Successful steals so far.</param>
/// <param name="Parks">Times a worker went to sleep so far.</param>
public readonly record struct SchedulerStats(long QueuedItems, long ParkedWorkers, long SearchingWorkers, long Steals, long Parks);
