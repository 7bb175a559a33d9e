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
/// disposal then stops being reported), or when a new runtime with the same name registers before
/// then (two series with one tag in a collection would be summed or overwritten by the tools).
/// <para><b>Carried counts.</b> The cumulative instruments (spawned, completed, unobserved, steals,
/// parks) are counters, which must never go down. A runtime's series is its name's, summed over the
/// runtimes of that name; so when an entry is removed while the name still has a runtime measured
/// (a namesake that lives on, or a new one), its totals are carried into the name's series, which
/// would otherwise drop by them. A name's carried totals end with its series: once no runtime of that
/// name is measured, they are dropped (a later namesake starts a new series at 0). One entry per
/// name in use, so a process that creates runtimes with fresh names keeps nothing per runtime.
/// Entries expire lazily, when something refreshes the list: a collection, a registration (before
/// it carries any namesake) or the end of a disposal. Whichever refresh finds an expired entry, it
/// is carried exactly when its name still has a runtime measured: a runtime registered after the
/// expiry refreshed the list first, so it cannot revive an ended series, and a runtime measured at
/// the expiry but no longer at the refresh ended the series since, dropping the carried totals
/// anyway. A disposal's start needs no refresh: it only moves a measured runtime to this list.</para>
/// Mutations and the collections' snapshots happen under one lock (<see cref="Gate"/>): disposals and
/// collections are rare next to jobs, and a runtime moving from the live set to this list between
/// two unlocked reads would be missed or counted twice by one collection.
/// </summary>
internal static class RetiredRuntimes
{
    private static readonly object s_lock = new();
    private static readonly List<RetiredRuntime> s_entries = [];
    private static readonly Dictionary<string, RuntimeTotals> s_carried = new(StringComparer.Ordinal);

    /// <summary>
    /// Retired entries, live runtimes and carried names that this thread's calls looked at: the work
    /// of a registration, a disposal or a collection, which tests bound per runtime (a count, not a
    /// timing). Per thread, so that runtimes of tests running in parallel do not add to it.
    /// </summary>
    [ThreadStatic]
    private static long t_visited;

    /// <summary>The lock of the live set's and this list's changes, and of a collection's snapshot of both.</summary>
    internal static object Gate => s_lock;

    /// <summary>See <c>t_visited</c>.</summary>
    internal static long VisitedOnThisThread => t_visited;

    /// <summary>Under <see cref="Gate"/>.</summary>
    internal static void Add(JobRuntime runtime) => s_entries.Add(new RetiredRuntime(runtime, Environment.TickCount64));

    /// <summary>
    /// A runtime named <paramref name="name"/> registers: retired namesakes still within their
    /// retention leave, their counts carried into the new runtime's series; <paramref name="live"/>
    /// are the runtimes registered so far (not the new one). Under <see cref="Gate"/>.
    /// </summary>
    internal static void RemoveNamed(string name, ICollection<JobRuntime> live)
    {
        // Expired entries go first, by the same rule as a collection's: carried only if their name was
        // still measured. Entries are pruned lazily, so without this an entry whose retention had passed
        // was carried into the new series if nothing happened to refresh the list since, and dropped if
        // an unrelated runtime's registration or disposal had: the new runtime started at the old
        // totals or at 0 depending on runtimes of other names. Its series had ended with the retention
        // (a collection in between would not have seen the name), so it starts at 0. This also prunes
        // when nobody collects: a process that creates and disposes runtimes in a loop keeps only the
        // recent ones.
        Refresh(live);
        s_entries.RemoveAll(e =>
        {
            t_visited++;
            if (e.Name != name)
            {
                return false;
            }

            Carry(e);
            return true;
        });
    }

    /// <summary>
    /// Drops the entries whose retention passed, freezes the drained ones, and returns what is left;
    /// <paramref name="live"/> are the registered runtimes, which keep their names' series going.
    /// Under <see cref="Gate"/>.
    /// </summary>
    internal static RetiredRuntime[] Refresh(ICollection<JobRuntime> live)
    {
        if (s_entries.Count == 0 && s_carried.Count == 0)
        {
            return [];
        }

        long now = Environment.TickCount64;
        long retention = MyriadMetrics.RetentionMilliseconds;
        List<RetiredRuntime>? expired = null;
        s_entries.RemoveAll(e =>
        {
            t_visited++;
            if (now - e.RetiredAt < retention)
            {
                return false;
            }

            (expired ??= []).Add(e);
            return true;
        });

        foreach (RetiredRuntime entry in s_entries)
        {
            t_visited++;
            entry.FreezeIfDrained();
        }

        if (expired is not null)
        {
            foreach (RetiredRuntime entry in expired)
            {
                if (InUse(entry.Name, live))
                {
                    Carry(entry);
                }
            }
        }

        if (s_carried.Count > 0)
        {
            List<string>? ended = null;
            foreach (string name in s_carried.Keys)
            {
                t_visited++;
                if (!InUse(name, live))
                {
                    (ended ??= []).Add(name);
                }
            }

            ended?.ForEach(name => s_carried.Remove(name));
        }

        return s_entries.ToArray();
    }

    /// <summary>The carried totals per name (see the type's remarks). Under <see cref="Gate"/>.</summary>
    internal static IEnumerable<KeyValuePair<string, RuntimeTotals>> Carried => s_carried;

    private static void Carry(RetiredRuntime entry)
    {
        RuntimeTotals totals = entry.Totals();
        s_carried[entry.Name] = s_carried.TryGetValue(entry.Name, out RuntimeTotals before) ? before + totals : totals;
    }

    private static bool InUse(string name, ICollection<JobRuntime> live)
    {
        foreach (RetiredRuntime entry in s_entries)
        {
            t_visited++;
            if (entry.Name == name)
            {
                return true;
            }
        }

        foreach (JobRuntime runtime in live)
        {
            t_visited++;
            if (runtime.Name == name)
            {
                return true;
            }
        }

        return false;
    }
}

internal sealed class RetiredRuntime(JobRuntime runtime, long retiredAt)
{
    private JobRuntime? _runtime = runtime;
    private RuntimeTotals _final;

    internal string Name { get; } = runtime.Name;

    internal long RetiredAt { get; } = retiredAt;

    internal bool IsFrozen => _runtime is null;

    /// <summary>What a collection reads: the live runtime while draining, the frozen totals after.</summary>
    internal RuntimeReading Reading => _runtime is { } live ? new RuntimeReading(live) : new RuntimeReading(_final);

    /// <summary>The cumulative counts now: the frozen ones, or the runtime's current ones.</summary>
    internal RuntimeTotals Totals() => _runtime is { } live ? RuntimeTotals.Of(live) : _final;

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
internal readonly record struct RuntimeTotals(long Spawned, long Completed, long Unobserved, long Steals, long Parks)
{
    internal static RuntimeTotals Of(JobRuntime runtime)
    {
        SchedulerStats stats = runtime.Stats();
        return new RuntimeTotals(runtime.SpawnedCount, runtime.CompletedCount, runtime.UnobservedExceptionCount, stats.Steals, stats.Parks);
    }

    public static RuntimeTotals operator +(RuntimeTotals a, RuntimeTotals b) =>
        new(a.Spawned + b.Spawned, a.Completed + b.Completed, a.Unobserved + b.Unobserved, a.Steals + b.Steals, a.Parks + b.Parks);
}

/// <summary>One runtime's values as the instruments read them: from a live runtime, or from frozen totals (no queue, no workers).</summary>
internal readonly struct RuntimeReading
{
    private readonly JobRuntime? _runtime;
    private readonly RuntimeTotals _totals;

    internal RuntimeReading(JobRuntime runtime) => _runtime = runtime;

    internal RuntimeReading(RuntimeTotals totals, bool carried = false)
    {
        _totals = totals;
        _carried = carried;
    }

    /// <summary>Counts carried into a name's series from a runtime no longer measured: no job of theirs is active.</summary>
    private readonly bool _carried;

    internal long Spawned => _runtime?.SpawnedCount ?? _totals.Spawned;

    internal long Completed => _runtime?.CompletedCount ?? _totals.Completed;

    internal long Active => _runtime is { } live ? MyriadMetrics.ActiveJobs(live) : _carried ? 0 : Math.Max(0, _totals.Spawned - _totals.Completed);

    internal long Unobserved => _runtime?.UnobservedExceptionCount ?? _totals.Unobserved;

    internal SchedulerStats Stats => _runtime?.Stats() ?? new SchedulerStats(0, 0, 0, _totals.Steals, _totals.Parks);
}
