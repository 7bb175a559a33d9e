using System;
using System.Collections.Generic;
using System.Diagnostics;
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
/// disposal then stops being reported), or, once frozen, when a new runtime with the same name
/// registers before then (its totals carried into the name's series, see below). An entry still
/// draining stays until it freezes: the collection sums it into its name's series as it does the
/// name's live runtimes, so its jobs still active are reported, and their completions counted.
/// <para><b>Carried counts.</b> The cumulative instruments (spawned, completed, unobserved, steals,
/// parks) are counters, which must never go down. A runtime's series is its name's, summed over the
/// runtimes of that name; so when an entry is removed while the name still has a runtime measured
/// (a namesake that lives on, or a new one), its totals are carried into the name's series, which
/// would otherwise drop by them. A name's carried totals end with its series: once no runtime of that
/// name is measured, they are dropped (a later namesake starts a new series at 0). One carried total
/// per name still measured, so a process that creates runtimes with fresh names keeps nothing per
/// runtime past its retention.
/// Entries expire lazily, when something refreshes the list: a collection, a registration (before
/// it carries any namesake) or the end of a disposal. Whichever refresh finds an expired entry, it
/// is carried exactly when its name still has a runtime measured: a runtime registered after the
/// expiry refreshed the list first, so it cannot revive an ended series, and a runtime measured at
/// the expiry but no longer at the refresh ended the series since, dropping the carried totals
/// anyway. A disposal's start needs no refresh: it only moves a measured runtime to this list.</para>
/// <para><b>Cost.</b> With the default retention a process that creates runtimes in a loop holds
/// thousands of entries (default names are unique), so a registration and a disposal must not look
/// at each (they did: creating runtimes got quadratically slower). Entries are kept in retirement
/// order, which is also their expiry order whatever the retention is set to, even changed at run
/// time (every entry expires at its retirement plus the current retention), so expiry takes them
/// from the front; per name, the name's runtimes measured (<see cref="NameSeries"/>: live count,
/// retired entries oldest first, carried totals) answer "is the name still measured" and "which
/// entries are its namesakes" without a scan. Freezing reads only the entries still draining: those
/// whose disposal has not completed (few: the disposals in progress), checked when a disposal
/// completes, and those whose runtime had not drained when its disposal completed (a job suspended
/// on a Task, say), checked in turn, a bounded number per registration or disposal
/// (<see cref="FreezeChecksPerCall"/>), and all at each collection. A registration and a disposal
/// thus cost O(1) amortized whatever the number of entries (the end of a disposal also looks at the
/// other disposals in progress); a collection costs O(entries) to read them (its measurements are
/// per name anyway), plus the entries still draining.</para>
/// <para><b>Locking.</b> Every member runs under one lock, <see cref="Gate"/>, taken by
/// <see cref="MyriadMetrics"/> around a registration, a disposal's start and end, and a collection's
/// snapshot of the live set and this list: disposals and collections are rare next to jobs, and a
/// runtime moving from the live set to this list between two unlocked reads would be missed or
/// counted twice by one collection. The live set (<c>MyriadMetrics.s_runtimes</c>) changes only
/// under the gate too, which keeps <see cref="NameSeries.Live"/> equal to its runtimes of the name.
/// Under the gate the code reads runtimes' counters and <see cref="JobRuntime.Stats"/> (which may take
/// a runtime's own lock briefly) and <see cref="RuntimeRegistry.Find"/> (lock-free); nothing takes
/// the gate while holding a runtime's lock.</para>
/// </summary>
internal static class RetiredRuntimes
{
    /// <summary>Entries still draining after their disposal completed that a registration or a disposal checks, at most.</summary>
    internal const int FreezeChecksPerCall = 2;

    private static readonly object s_lock = new();

    /// <summary>Every entry, oldest retirement first: the order in which they expire.</summary>
    private static readonly LinkedList<RetiredRuntime> s_entries = new();

    /// <summary>Every name with a runtime measured, live or retired (and its carried totals), by name.</summary>
    private static readonly Dictionary<string, NameSeries> s_names = new(StringComparer.Ordinal);

    /// <summary>
    /// Entries whose runtime's disposal had not completed when last looked at; checked, and left,
    /// when a disposal completes. May also hold entries frozen or removed since, skipped then.
    /// </summary>
    private static readonly List<RetiredRuntime> s_disposing = [];

    /// <summary>
    /// Entries whose runtime had not drained when its disposal completed, checked in turn. May also
    /// hold entries frozen or removed since, dropped when their turn comes.
    /// </summary>
    private static readonly Queue<RetiredRuntime> s_draining = new();

    /// <summary>
    /// Retired entries and names that this thread's calls looked at: the work of a registration, a
    /// disposal or a collection, which tests bound per runtime (a count, not a timing). Per thread,
    /// so that runtimes of tests running in parallel do not add to it.
    /// </summary>
    [ThreadStatic]
    private static long t_visited;

    /// <summary>The lock of the live set's and this list's changes, and of a collection's snapshot of both.</summary>
    internal static object Gate => s_lock;

    /// <summary>See <c>t_visited</c>.</summary>
    internal static long VisitedOnThisThread => t_visited;

    /// <summary>
    /// What a collection reads, oldest retirement first, after <see cref="Refresh"/>. Under
    /// <see cref="Gate"/>, enumerated there too.
    /// </summary>
    internal static IEnumerable<RetiredRuntime> Entries => s_entries;

    /// <summary>The carried totals per name (see the type's remarks). Under <see cref="Gate"/>, enumerated there too.</summary>
    internal static IEnumerable<KeyValuePair<string, RuntimeTotals>> Carried
    {
        get
        {
            foreach (KeyValuePair<string, NameSeries> name in s_names)
            {
                if (name.Value.HasCarried)
                {
                    yield return new KeyValuePair<string, RuntimeTotals>(name.Key, name.Value.Carried);
                }
            }
        }
    }

    /// <summary>
    /// A runtime named <paramref name="name"/> was added to the live set: retired namesakes that have
    /// drained leave, their counts carried into the name's series (one still draining stays, read as
    /// it drains). Under <see cref="Gate"/>.
    /// </summary>
    internal static void Registered(string name)
    {
        // Expired entries go first, by the same rule as a collection's: carried only if their name was
        // still measured. Entries are pruned lazily, so without this an entry whose retention had passed
        // was carried into the new series if nothing happened to refresh the list since, and dropped if
        // an unrelated runtime's registration or disposal had: the new runtime started at the old
        // totals or at 0 depending on runtimes of other names. Its series had ended with the retention
        // (a collection in between would not have seen the name), so it starts at 0. This also prunes
        // when nobody collects: a process that creates and disposes runtimes in a loop keeps only the
        // recent ones.
        Prune();
        if (s_names.TryGetValue(name, out NameSeries? series))
        {
            // Only drained namesakes leave: their totals are final, so carrying them loses nothing. One
            // still draining (a job suspended at its disposal, woken later) stays measured, summed into
            // the name's series like a live runtime, until it drains: carried now, its active jobs
            // would vanish from the series and their completions would never be counted. The walk
            // stops at the first such entry (oldest first), so a registration looks at one entry
            // besides those it removes; drained entries behind it leave with their retention.
            while (series.Oldest is { } namesake)
            {
                t_visited++;
                namesake.FreezeIfDrained();
                if (!namesake.IsFrozen)
                {
                    break;
                }

                series.RemoveOldest();
                s_entries.Remove(namesake.Node);
                series.Carry(namesake.Totals());
                namesake.Release();
            }
        }
        else
        {
            series = new NameSeries();
            s_names.Add(name, series);
        }

        series.Live++;
        CheckDraining(FreezeChecksPerCall);
    }

    /// <summary>The disposal of a live runtime started: it moves from the live set to this list. Under <see cref="Gate"/>.</summary>
    internal static void Add(JobRuntime runtime)
    {
        NameSeries series = s_names[runtime.Name];
        Debug.Assert(series.Live > 0, "a runtime leaving the live set was counted in it");
        series.Live--;

        // Never before the newest entry, so that the list stays in expiry order (the clock is
        // monotonic; this only guards the invariant).
        long now = Environment.TickCount64;
        long retiredAt = s_entries.Last is { } newest ? Math.Max(now, newest.Value.RetiredAt) : now;
        var entry = new RetiredRuntime(runtime, retiredAt);
        entry.Node = s_entries.AddLast(entry);
        series.AddNewest(entry);
        s_disposing.Add(entry);
    }

    /// <summary>
    /// A disposal completed: expired entries leave, and the entries whose disposal completed freeze
    /// if drained (the runtime is then no longer referenced from here), or wait their turn among the
    /// draining ones. Under <see cref="Gate"/>.
    /// </summary>
    internal static void DisposalCompleted()
    {
        Prune();
        s_disposing.RemoveAll(static entry =>
        {
            t_visited++;
            if (entry.IsFrozen)
            {
                return true; // frozen by a collection, or removed
            }

            if (!entry.DisposalIsComplete)
            {
                return false;
            }

            entry.FreezeIfDrained();
            if (!entry.IsFrozen)
            {
                s_draining.Enqueue(entry);
            }

            return true;
        });
        CheckDraining(FreezeChecksPerCall);
    }

    /// <summary>
    /// Before a collection reads <see cref="Entries"/> and <see cref="Carried"/>: drops the entries
    /// whose retention passed and freezes the drained ones. Under <see cref="Gate"/>.
    /// </summary>
    internal static void Refresh()
    {
        Prune();
        foreach (RetiredRuntime entry in s_disposing)
        {
            t_visited++;
            entry.FreezeIfDrained();
        }

        CheckDraining(s_draining.Count);
    }

    /// <summary>
    /// Removes the entries whose retention has passed, oldest first, carrying each whose name is
    /// still measured and ending the series of the others' names.
    /// </summary>
    private static void Prune()
    {
        if (s_entries.Count == 0)
        {
            return;
        }

        long now = Environment.TickCount64;
        long retention = MyriadMetrics.RetentionMilliseconds;
        while (s_entries.First is { } first)
        {
            t_visited++;
            RetiredRuntime entry = first.Value;
            if (now - entry.RetiredAt < retention)
            {
                break;
            }

            s_entries.RemoveFirst();
            NameSeries series = s_names[entry.Name];
            Debug.Assert(ReferenceEquals(series.Oldest, entry), "a name's entries expire in the list's order");
            series.RemoveOldest();
            if (series.IsMeasured)
            {
                series.Carry(entry.Totals());
            }
            else
            {
                s_names.Remove(entry.Name); // the series ended: its carried totals with it
            }

            entry.Release();
        }
    }

    /// <summary>
    /// Checks up to <paramref name="checks"/> entries of <c>s_draining</c> in turn, freezing the
    /// drained ones and putting the others back at the end; entries frozen or removed since they
    /// were queued leave without counting as checks (each was queued once per check).
    /// </summary>
    private static void CheckDraining(int checks)
    {
        for (int queued = s_draining.Count; queued > 0 && checks > 0; queued--)
        {
            t_visited++;
            RetiredRuntime entry = s_draining.Dequeue();
            if (entry.IsFrozen)
            {
                continue;
            }

            checks--;
            entry.FreezeIfDrained();
            if (!entry.IsFrozen)
            {
                s_draining.Enqueue(entry);
            }
        }
    }

    /// <summary>
    /// The runtimes measured under one name: the live ones (counted), the retired ones (linked oldest
    /// first through <see cref="RetiredRuntime.NextOfName"/>), and the totals carried into its series.
    /// </summary>
    private sealed class NameSeries
    {
        /// <summary>Runtimes of the name in the live set.</summary>
        internal int Live;

        internal RetiredRuntime? Oldest;
        private RetiredRuntime? _newest;

        internal bool HasCarried;
        internal RuntimeTotals Carried;

        /// <summary>Whether a runtime of the name is measured, live or retired: the series goes on.</summary>
        internal bool IsMeasured => Live > 0 || Oldest is not null;

        internal void AddNewest(RetiredRuntime entry)
        {
            if (_newest is null)
            {
                Oldest = entry;
            }
            else
            {
                _newest.NextOfName = entry;
            }

            _newest = entry;
        }

        internal void RemoveOldest()
        {
            RetiredRuntime oldest = Oldest!;
            Oldest = oldest.NextOfName;
            oldest.NextOfName = null;
            if (Oldest is null)
            {
                _newest = null;
            }
        }

        internal void Carry(RuntimeTotals totals)
        {
            Carried = HasCarried ? Carried + totals : totals;
            HasCarried = true;
        }
    }
}

internal sealed class RetiredRuntime(JobRuntime runtime, long retiredAt)
{
    private JobRuntime? _runtime = runtime;
    private RuntimeTotals _final;

    internal string Name { get; } = runtime.Name;

    internal long RetiredAt { get; } = retiredAt;

    /// <summary>Its node in the list of every entry.</summary>
    internal LinkedListNode<RetiredRuntime> Node { get; set; } = null!;

    /// <summary>The next retired runtime of the same name, retired later.</summary>
    internal RetiredRuntime? NextOfName { get; set; }

    /// <summary>No longer reads the runtime: frozen, or removed from the list (<see cref="Release"/>).</summary>
    internal bool IsFrozen => _runtime is null;

    /// <summary>
    /// Whether the runtime's disposal completed: its id was released (<c>JobRuntime.CompleteDisposal</c>
    /// releases it before it reports the completion here). False once frozen.
    /// </summary>
    internal bool DisposalIsComplete => _runtime is { } live && !ReferenceEquals(RuntimeRegistry.Find(live.Id), live);

    /// <summary>Removed from the list: drops the runtime, which nothing reads through this entry any more.</summary>
    internal void Release() => _runtime = null;

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
