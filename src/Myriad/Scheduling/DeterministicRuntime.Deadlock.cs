using System;
using System.Collections.Generic;
using System.Threading;
using Myriad.Coordination;
using Myriad.Diagnostics;
using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>
/// The deadlock report: the runtime tracks its own suspended jobs while it drives, and when nothing
/// can run and nothing can wake a job, <c>Run</c> throws <see cref="DeadlockException"/> with the
/// list of live jobs instead of waiting forever.
/// </summary>
/// <remarks>
/// <para><b>Tracking.</b> While any deterministic runtime drives, <see cref="JobDiagnostics"/> reports
/// each job's first suspension and its release to the job's runtime (one flag read per suspension and
/// release when none drives, as before). A job tracked here whose cell was since recycled is
/// recognized by its version and ignored.</para>
/// <para><b>Protocol</b> (driving thread, when the queue is empty and the virtual clock has no timer):
/// 1. If the runtime's clock is not its own virtual clock, stop: timers of another clock may fire.
/// 2. Take the live jobs; if any waits on something outside the runtime (a non-Myriad awaitable, a
///    job of another runtime, a delay on another clock), stop: another thread may wake it. A wait is
///    followed through the cells that are no tracked job (a spawn waiting for the job its body
///    returned; every contestant of a <c>Job.WhenAny</c> or <c>WaitAsync</c> race), and the blocking
///    wait's own cell is checked the same way. A listed job that runs again (blocked in a wait inside
///    it, after an earlier suspension) awaits nothing: it is skipped, its wait being the blocking one.
/// 3. Give other threads <see cref="DeadlockGracePeriod"/> to queue work or complete the awaited
///    job; if they do, stop.
/// 4. Throw, with the list.</para>
/// </remarks>
public sealed partial class DeterministicRuntime
{
    /// <summary>
    /// How long a deterministic runtime waits in real time, once it found every job stuck, for another
    /// thread to queue work before it throws <see cref="DeadlockException"/>. Only a program that feeds
    /// the runtime from other threads (which then does not replay anyway) can need it; 100 ms covers
    /// a thread-pool hop on a loaded machine many times over and is paid once per reported deadlock.
    /// Zero checks once, without waiting.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative or longer than <see cref="int.MaxValue"/> milliseconds.</exception>
    public TimeSpan DeadlockGracePeriod
    {
        get => _deadlockGracePeriod;
        init
        {
            // A negative value would skip the wait silently, and one past int.MaxValue ms is no grace
            // period but a hang: both are mistakes, refused where they are made.
            ArgumentOutOfRangeException.ThrowIfLessThan(value, TimeSpan.Zero);
            ArgumentOutOfRangeException.ThrowIfGreaterThan(value, TimeSpan.FromMilliseconds(int.MaxValue));
            _deadlockGracePeriod = value;
        }
    }

    private readonly TimeSpan _deadlockGracePeriod = TimeSpan.FromMilliseconds(100);

    private readonly Lock _trackGate = new();
    private readonly Dictionary<JobCell, (long Id, short Version)> _tracked = new(ReferenceEqualityComparer.Instance);

    private void BeginTracking() => JobDiagnostics.BeginDeterministicDrive();

    private void EndTracking() => JobDiagnostics.EndDeterministicDrive();

    /// <summary>The last number given to a tracked job: numbered per runtime, so that a report replays with the seed.</summary>
    private long _lastTrackedId;

    internal void OnJobSuspended(JobCell cell)
    {
        lock (_trackGate)
        {
            _tracked[cell] = (++_lastTrackedId, cell.Version);
        }
    }

    internal void OnJobReleased(JobCell cell)
    {
        lock (_trackGate)
        {
            _tracked.Remove(cell);
        }
    }

    /// <summary>The tracked jobs still in the life they were tracked in.</summary>
    private List<KeyValuePair<JobCell, long>> LiveJobs()
    {
        var live = new List<KeyValuePair<JobCell, long>>();
        lock (_trackGate)
        {
            foreach (KeyValuePair<JobCell, (long Id, short Version)> entry in _tracked)
            {
                if (entry.Key.Version == entry.Value.Version && ReferenceEquals(entry.Key.OwnerRuntime, this))
                {
                    live.Add(new(entry.Key, entry.Value.Id));
                }
            }
        }

        return live;
    }

    /// <summary>The most cells <see cref="LeadsOutside"/> follows; the limit guards against a cycle read from a racy snapshot, and a chain it cannot finish counts as leading outside (a deadlock is reported only when proven).</summary>
    private const int MaxWaitHops = 16;

    /// <summary>
    /// Step 2 for one wait: whether the chain of cells from <paramref name="awaited"/> reaches
    /// something outside this runtime (a job of another runtime, a delay) before it reaches one of
    /// this runtime's live jobs (whose own wait is checked by itself) or a cell that says no more.
    /// Cells that are no tracked job are followed: a spawn that waits for the job its body returned,
    /// a view's read that waits for a receive, and each contestant of a race.
    /// </summary>
    private bool LeadsOutside(JobCell awaited, HashSet<JobCell> liveCells, Dictionary<JobCell, JobCell> awaitedBy, int hops = MaxWaitHops)
    {
        JobCell? current = awaited;
        for (int hop = 0; hop < hops && current is not null; hop++)
        {
            if (current is DelayCell || (current.OwnerRuntime is { } other && !ReferenceEquals(other, this)))
            {
                return true;
            }

            if (liveCells.Contains(current) || current.IsCompletedUnchecked)
            {
                return false;
            }

            if (current.RacedCells() is { } raced)
            {
                // A race (Job.WhenAny, WaitAsync) ends when any contestant does: it can be woken from
                // outside if any contestant's chain leads there. The branches share what is left of
                // the hop limit, so a cycle read from a racy snapshot still ends.
                foreach (JobCell? contestant in raced)
                {
                    if (contestant is not null && LeadsOutside(contestant, liveCells, awaitedBy, hops - hop - 1))
                    {
                        return true;
                    }
                }

                return false;
            }

            current = awaitedBy.TryGetValue(current, out JobCell? next) ? next : current.AwaitedCell();
        }

        // Out of hops before the chain ended (a long chain of spawns, each returning the next one's
        // job): not proven stuck, so not reported. A chain that ended (null) is stuck.
        return current is not null;
    }

    /// <summary>Whether <paramref name="waitedOn"/>, or a cell its chain of waits leads to, is done or one of the <paramref name="live"/> jobs the report lists.</summary>
    private static bool LeadsToListed(JobCell waitedOn, List<KeyValuePair<JobCell, long>> live)
    {
        JobCell? current = waitedOn;
        for (int hop = 0; hop < MaxWaitHops && current is not null; hop++)
        {
            JobCell cell = current;
            if (cell.IsCompletedUnchecked || live.Exists(entry => ReferenceEquals(entry.Key, cell)))
            {
                return true;
            }

            current = cell.AwaitedCell();
        }

        return false;
    }

    private protected override void ThrowIfDeadlocked(BlockingWaiter waiter, JobCell? waitedOn = null)
    {
        if (_explicitTimeProvider is not null || IsDisposed)
        {
            return; // step 1
        }

        List<KeyValuePair<JobCell, long>> live = LiveJobs();
        var awaitedBy = new Dictionary<JobCell, JobCell>(ReferenceEqualityComparer.Instance);
        foreach (KeyValuePair<JobCell, long> entry in live)
        {
            if (entry.Key.ContinuationUnchecked is JobCell awaiting)
            {
                awaitedBy[awaiting] = entry.Key;
            }
        }

        var liveCells = new HashSet<JobCell>(ReferenceEqualityComparer.Instance);
        foreach (KeyValuePair<JobCell, long> entry in live)
        {
            liveCells.Add(entry.Key);
        }

        foreach (KeyValuePair<JobCell, long> entry in live)
        {
            JobCell cell = entry.Key;
            if (cell.IsCompletedUnchecked)
            {
                continue;
            }

            if (!awaitedBy.TryGetValue(cell, out JobCell? awaited))
            {
                awaited = cell.AwaitedCell();
            }

            if (awaited is null && cell.IsRunningBetweenAwaits())
            {
                // A job that suspended before and now runs again: only this thread runs the
                // runtime's jobs, so it is one of the jobs blocked in this wait (or in a wait this
                // one runs inside). What it waits for is checked below (waitedOn), or by the outer
                // wait once this one returns; it is no wait on something outside.
                continue;
            }

            if (awaited is null || LeadsOutside(awaited, liveCells, awaitedBy))
            {
                return; // step 2
            }
        }

        // The wait's own cell too: a spawn whose body returned another runtime's job waits for that
        // job with no live job of its own (Run(other, o => o.Spawn(...)) has none at all).
        if (waitedOn is { IsCompletedUnchecked: false } && LeadsOutside(waitedOn, liveCells, awaitedBy))
        {
            return; // step 2
        }

        // Step 3: poll, since the driver's parker is the base class's; this path runs once per deadlock.
        long deadline = Environment.TickCount64 + (long)DeadlockGracePeriod.TotalMilliseconds;
        do
        {
            if (PendingCount > 0 || waiter.IsDone)
            {
                return;
            }

            Thread.Sleep(1);
        }
        while (Environment.TickCount64 < deadline);

        // Step 4. The wait's own cell is named when it does not lead to a listed job (see
        // DeadlockException): the spawn that Run waits on leads to its body's job, listed already.
        live = LiveJobs();
        bool listed = waitedOn is null || LeadsToListed(waitedOn, live);
        throw new DeadlockException($"{Name} (seed {Seed})", JobDiagnostics.SnapshotOf(live), listed ? null : waitedOn);
    }
}
