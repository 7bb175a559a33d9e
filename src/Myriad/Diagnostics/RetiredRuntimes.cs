using System;
using System.Collections.Generic;
using Myriad.Scheduling;

namespace Myriad.Diagnostics;

/// <summary>
/// Runtimes whose disposal started, still measured for <see cref="MyriadMetrics.DisposedRuntimeRetention"/>
/// so that their series end on their final values. Each entry goes through two states:
/// <list type="number">
/// <item>draining: it holds the runtime and reads its live counters (jobs still finish after
/// disposal started: the drain, and jobs resumed later on the thread pool);</item>
/// <item>frozen: once a read finds no active job and an empty queue, it copies the totals and drops
/// the runtime, so a process that creates many runtimes keeps a few numbers per retired one, not the
/// runtimes themselves.</item>
/// </list>
/// An entry is removed when its retention has passed (frozen or not: a job stuck forever after the
/// disposal then stops being reported), or when a new runtime with the same name registers (two
/// series with one tag in a collection would be summed or overwritten by the tools).
/// Mutations happen under one lock: disposals and collections are rare next to jobs.
/// </summary>
internal static class RetiredRuntimes
{
    private static readonly object s_lock = new();
    private static readonly List<RetiredRuntime> s_entries = [];

    internal static void Add(JobRuntime runtime)
    {
        lock (s_lock)
        {
            s_entries.Add(new RetiredRuntime(runtime, Environment.TickCount64));
        }
    }

    internal static void RemoveNamed(string name)
    {
        lock (s_lock)
        {
            s_entries.RemoveAll(e => e.Name == name);
        }
    }

    /// <summary>Prunes expired entries, freezes drained ones, and returns the rest.</summary>
    internal static RetiredRuntime[] Refresh()
    {
        long now = Environment.TickCount64;
        long retention = MyriadMetrics.RetentionMilliseconds;
        lock (s_lock)
        {
            if (s_entries.Count == 0)
            {
                return [];
            }

            s_entries.RemoveAll(e => now - e.RetiredAt >= retention);
            foreach (RetiredRuntime entry in s_entries)
            {
                entry.FreezeIfDrained();
            }

            return s_entries.ToArray();
        }
    }
}

/// <summary>One retired runtime; see <see cref="RetiredRuntimes"/>. Mutated only under its lock.</summary>
internal sealed class RetiredRuntime(JobRuntime runtime, long retiredAt)
{
    private JobRuntime? _runtime = runtime;
    private RuntimeTotals _final;

    internal string Name { get; } = runtime.Name;

    internal long RetiredAt { get; } = retiredAt;

    internal bool IsFrozen => _runtime is null;

    /// <summary>What a collection reads: the live runtime while draining, the frozen totals after.</summary>
    internal RuntimeReading Reading => _runtime is { } live ? new RuntimeReading(live) : new RuntimeReading(_final);

    internal void FreezeIfDrained()
    {
        if (_runtime is not { } live)
        {
            return;
        }

        SchedulerStats stats = live.Stats();
        if (MyriadMetrics.ActiveJobs(live) == 0 && stats.QueuedItems == 0)
        {
            _final = new RuntimeTotals(live.SpawnedCount, live.CompletedCount, live.UnobservedExceptionCount, stats.Steals, stats.Parks);
            _runtime = null;
        }
    }
}

/// <summary>The monotonic totals of a runtime that finished draining.</summary>
internal readonly record struct RuntimeTotals(long Spawned, long Completed, long Unobserved, long Steals, long Parks);

/// <summary>One runtime's values as the instruments read them: from a live runtime, or from frozen totals (no queue, no workers).</summary>
internal readonly struct RuntimeReading
{
    private readonly JobRuntime? _runtime;
    private readonly RuntimeTotals _totals;

    internal RuntimeReading(JobRuntime runtime) => _runtime = runtime;

    internal RuntimeReading(RuntimeTotals totals) => _totals = totals;

    internal long Spawned => _runtime?.SpawnedCount ?? _totals.Spawned;

    internal long Completed => _runtime?.CompletedCount ?? _totals.Completed;

    internal long Active => _runtime is { } live ? MyriadMetrics.ActiveJobs(live) : Math.Max(0, _totals.Spawned - _totals.Completed);

    internal long Unobserved => _runtime?.UnobservedExceptionCount ?? _totals.Unobserved;

    internal SchedulerStats Stats => _runtime?.Stats() ?? new SchedulerStats(0, 0, 0, _totals.Steals, _totals.Parks);
}
