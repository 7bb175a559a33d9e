using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using System.Threading;
using Myriad.Jobs;

namespace Myriad.Diagnostics;

/// <summary>
/// A dump of the jobs that are suspended right now and of what each one awaits, for debugging hangs
/// ("who waits on whom"). Tracking is off by default because it costs a dictionary insert per
/// suspension; turn it on with <see cref="TrackLiveJobs"/> or the AppContext switch
/// <c>Myriad.TrackLiveJobs</c>.
/// </summary>
/// <remarks>
/// A job is tracked from its first suspension until its result is consumed. What it awaits is read
/// from the awaited cell's continuation: if job A's box is registered as the continuation of job B,
/// A awaits B. A job awaiting a Task or ValueTask shows as awaiting a foreign awaitable; a job
/// awaiting a promise or any other cell shows that cell's description. The dump is a snapshot taken
/// while jobs keep running, so it may be slightly inconsistent; it never blocks them.
/// </remarks>
public static class JobDiagnostics
{
    private static readonly ConcurrentDictionary<JobCell, long> s_live = new(ReferenceEqualityComparer.Instance);
    private static long s_nextId;
    private static volatile bool s_userEnabled = AppContext.TryGetSwitch("Myriad.TrackLiveJobs", out bool on) && on;

    /// <summary>Drives of deterministic runtimes in progress in the process; their jobs are tracked by their runtime (for its deadlock report) meanwhile.</summary>
    private static int s_deterministicDrives;

    /// <summary>
    /// The one flag the job machinery reads on its hot paths: <see cref="s_userEnabled"/>, or a
    /// deterministic runtime driving. Both off (the normal case) costs one volatile read per
    /// suspension and per release, as before deterministic runtimes tracked anything.
    /// </summary>
    private static volatile bool s_enabled = s_userEnabled;

    private static readonly Lock s_gate = new();

    /// <summary>Whether suspended jobs are tracked. Jobs suspended before it was turned on are not listed.</summary>
    public static bool TrackLiveJobs
    {
        get => s_userEnabled;
        set
        {
            lock (s_gate)
            {
                s_userEnabled = value;
                s_enabled = value || s_deterministicDrives > 0;
            }

            if (!value)
            {
                s_live.Clear();
            }
        }
    }

    internal static bool Enabled => s_enabled;

    /// <summary>A deterministic runtime starts driving: its jobs' suspensions and releases are reported to it until <see cref="EndDeterministicDrive"/>.</summary>
    internal static void BeginDeterministicDrive()
    {
        lock (s_gate)
        {
            s_deterministicDrives++;
            s_enabled = true;
        }
    }

    internal static void EndDeterministicDrive()
    {
        lock (s_gate)
        {
            s_deterministicDrives--;
            s_enabled = s_userEnabled || s_deterministicDrives > 0;
        }
    }

    internal static void OnSuspended(JobCell cell)
    {
        if (s_enabled)
        {
            if (s_userEnabled)
            {
                s_live.TryAdd(cell, Interlocked.Increment(ref s_nextId));
            }

            // The box is created before it records its runtime: the job is the suspending thread's runtime's.
            if (Volatile.Read(ref s_deterministicDrives) > 0 && Internal.PerThread.CurrentOrNull?.Context?.Runtime is Scheduling.DeterministicRuntime runtime)
            {
                runtime.OnJobSuspended(cell);
            }
        }
    }

    /// <summary>
    /// A cell's label with compiler-generated names made readable. Spawned jobs describe themselves
    /// by their delegate's method name, which for a lambda is the compiler's (<c>&lt;Run&gt;b__2_1</c>).
    /// </summary>
    private static string Label(JobCell cell)
    {
        const string Spawned = "spawned ";
        string description = cell.Describe();
        return description.StartsWith(Spawned + "<", StringComparison.Ordinal)
            ? Spawned + CompilerNames.DescribeMethod(description.Substring(Spawned.Length))
            : description;
    }

    internal static void OnReleased(JobCell cell)
    {
        if (s_enabled)
        {
            s_live.TryRemove(cell, out _);
            if (Volatile.Read(ref s_deterministicDrives) > 0 && cell.OwnerRuntime is Scheduling.DeterministicRuntime runtime)
            {
                runtime.OnJobReleased(cell);
            }
        }
    }

    /// <summary>
    /// A snapshot of the tracked jobs, oldest first: every suspended <c>async Job</c> method, and one
    /// that completed and whose result its awaiter has not read yet (<see cref="LiveJob.IsCompleted"/>).
    /// A spawned job that completed before anyone awaited its handle is not listed: its result waits
    /// in the spawn, not in a tracked method.
    /// </summary>
    public static IReadOnlyList<LiveJob> Snapshot() => SnapshotOf(s_live);

    /// <summary>A snapshot of the given tracked jobs (cell and id), oldest first.</summary>
    internal static IReadOnlyList<LiveJob> SnapshotOf(IEnumerable<KeyValuePair<JobCell, long>> live)
    {
        var ids = new Dictionary<JobCell, long>(ReferenceEqualityComparer.Instance);
        foreach (KeyValuePair<JobCell, long> entry in live)
        {
            ids[entry.Key] = entry.Value;
        }

        // Invert "cell -> its continuation" into "awaiting job -> awaited cell".
        var awaits = new Dictionary<JobCell, JobCell>(ReferenceEqualityComparer.Instance);
        foreach (JobCell cell in ids.Keys)
        {
            if (cell.ContinuationUnchecked is JobCell awaiting)
            {
                awaits[awaiting] = cell;
            }
        }

        var jobs = new List<LiveJob>(ids.Count);
        foreach ((JobCell cell, long id) in ids.OrderBy(e => e.Value))
        {
            long? awaitedId = null;
            string awaiting;
            if (cell.IsCompletedUnchecked)
            {
                awaiting = "nothing (completed, result not consumed yet)";
            }
            else if (awaits.TryGetValue(cell, out JobCell? awaited) || (awaited = cell.AwaitedCell()) is not null)
            {
                JobCell shown = ThroughUntracked(awaited, ids, awaits);
                awaitedId = ids.TryGetValue(shown, out long other) ? other : null;
                awaiting = awaitedId is null ? Label(awaited) : $"job #{awaitedId} ({Label(shown)})";
            }
            else
            {
                awaiting = cell.DescribeAwaiting() ?? "a job or cell that is not tracked";
            }

            jobs.Add(new LiveJob(id, Label(cell), cell.IsCompletedUnchecked, awaiting, awaitedId));
        }

        return jobs;
    }

    /// <summary>The most untracked cells <see cref="ThroughUntracked"/> follows: a spawn box is one hop; the limit guards against a cycle read from a racy snapshot.</summary>
    private const int MaxUntrackedHops = 8;

    /// <summary>
    /// The tracked job behind <paramref name="awaited"/>. A spawned job's handle is its spawn box,
    /// which is never tracked (it never suspends: it waits for the job its body returned as that
    /// job's continuation), so without this every <c>await runtime.Spawn(...)</c> would break the
    /// "who waits on whom" chain at an anonymous "spawned job". Returns <paramref name="awaited"/>
    /// when no tracked job is found.
    /// </summary>
    private static JobCell ThroughUntracked(JobCell awaited, Dictionary<JobCell, long> ids, Dictionary<JobCell, JobCell> awaits)
    {
        JobCell current = awaited;
        for (int hop = 0; hop < MaxUntrackedHops && !ids.ContainsKey(current); hop++)
        {
            if (!awaits.TryGetValue(current, out JobCell? inner) && (inner = current.AwaitedCell()) is null)
            {
                return awaited;
            }

            current = inner;
        }

        return ids.ContainsKey(current) ? current : awaited;
    }

    /// <summary>The snapshot as text, one job per line.</summary>
    public static string Dump() => Format(Snapshot());

    /// <summary>Jobs as the text of <see cref="Dump"/>, one job per line.</summary>
    internal static string Format(IReadOnlyList<LiveJob> jobs)
    {
        var text = new StringBuilder();
        text.Append(jobs.Count).AppendLine(" live job(s)");
        foreach (LiveJob job in jobs)
        {
            text.Append("  #").Append(job.Id).Append(' ').Append(job.Method)
                .Append(job.IsCompleted ? " [completed]" : " [suspended]")
                .Append(" awaits ").AppendLine(job.Awaiting);
        }

        return text.ToString();
    }
}

/// <summary>One entry of <see cref="JobDiagnostics.Snapshot"/>.</summary>
/// <param name="Id">A number given at the job's first suspension (unique for the process).</param>
/// <param name="Method">The async method (or the kind of cell) behind the job.</param>
/// <param name="IsCompleted">Whether the job completed and only its consumer has not read it yet.</param>
/// <param name="Awaiting">What the job is suspended on, in words.</param>
/// <param name="AwaitingJobId">The id of the awaited job, when that job is tracked too.</param>
public sealed record LiveJob(long Id, string Method, bool IsCompleted, string Awaiting, long? AwaitingJobId);
