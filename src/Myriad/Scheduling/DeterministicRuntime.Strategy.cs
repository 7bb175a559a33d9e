using System;
using System.Collections.Generic;
using Myriad.Internal;

namespace Myriad.Scheduling;

/// <summary>The scheduling strategies of a deterministic runtime: uniform random choice, or PCT's priorities.</summary>
/// <remarks>
/// <para><b>Priority strategy</b> (PCT, as in Coyote's prioritized strategy), run on the driving thread
/// only, under the queue's lock:
/// 1. An item seen for the first time gets a random priority of at least <see cref="BasePriority"/>
///    (a job's box is the item it queues on every resume, so the priority is the job's). Boxes are
///    pooled: a box reused by another job is seen anew, because the priority is recorded with the
///    box's version, which every reuse changes; an item that is not a job's cell (a detached
///    spawn's entry, a task) runs once per queueing, so its priority is dropped when it is picked.
///    A job's priority therefore never depends on which pooled object it got, which depends on the
///    thread's pools and so on what ran before: the same seed replays the same schedule.
/// 2. Every step picks the queued item of highest priority (ties cannot happen in practice: 63-bit
///    random values; the earliest queued wins if they do).
/// 3. If the step is the i-th of the change points (drawn up front, uniformly among the first
///    <see cref="StepHorizon"/> steps), the picked item's priority becomes <c>d − i</c>, below every
///    initial priority and every earlier change, and the step picks again.
/// 4. Past twice the horizon, every step picks at random: strict priorities would let a job that
///    polls and yields starve the job it waits for, a livelock no real scheduler has.</para>
/// </remarks>
public sealed partial class DeterministicRuntime
{
    /// <summary>Initial priorities lie above this; change points assign values below it (d − i ≥ 0).</summary>
    private const long BasePriority = 1L << 32;

    /// <summary>
    /// Step horizon used when none is given: the change points fall among this many first steps.
    /// A PCT run finds a bug of depth d with the best probability when the horizon is close to the
    /// run's length; the explorer measures the length of a test's runs and passes it instead.
    /// </summary>
    internal const int DefaultStepHorizon = 1000;

    private readonly Dictionary<WorkItem, (long Priority, short Version)>? _priorities;
    private readonly long[]? _changePoints;
    private int _nextChange;

    /// <summary>
    /// Creates a runtime whose schedule is a function of <paramref name="seed"/> and
    /// <paramref name="strategy"/>; see <see cref="ScheduleStrategy"/>.
    /// </summary>
    /// <param name="seed">The seed every random choice of the run derives from.</param>
    /// <param name="strategy">How the next queued item is picked.</param>
    /// <param name="priorityChangePoints">For <see cref="ScheduleStrategy.Priority"/>: the number of change points (PCT's d − 1; finds bugs of depth up to this plus one).</param>
    /// <param name="stepHorizon">For <see cref="ScheduleStrategy.Priority"/>: the change points fall among this many first steps; about the length of a run (<see cref="Steps"/>) is best.</param>
    /// <param name="name">Tags the runtime's metrics.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="strategy"/> is not defined, <paramref name="priorityChangePoints"/> is negative, or <paramref name="stepHorizon"/> is not positive.</exception>
    public DeterministicRuntime(int seed, ScheduleStrategy strategy, int priorityChangePoints = 2, int stepHorizon = DefaultStepHorizon, string? name = null)
        : this(seed, name)
    {
        if (strategy is not (ScheduleStrategy.Random or ScheduleStrategy.Priority))
        {
            throw new ArgumentOutOfRangeException(nameof(strategy), strategy, "Unknown schedule strategy.");
        }

        ArgumentOutOfRangeException.ThrowIfNegative(priorityChangePoints);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(stepHorizon);
        Strategy = strategy;
        PriorityChangePoints = priorityChangePoints;
        StepHorizon = stepHorizon;
        if (strategy == ScheduleStrategy.Priority)
        {
            _priorities = new Dictionary<WorkItem, (long, short)>(ReferenceEqualityComparer.Instance);
            _changePoints = new long[priorityChangePoints];
            for (int i = 0; i < _changePoints.Length; i++)
            {
                _changePoints[i] = 1 + _random.Next(stepHorizon);
            }

            Array.Sort(_changePoints);
        }
    }

    /// <summary>How the runtime picks the next queued item.</summary>
    public ScheduleStrategy Strategy { get; }

    /// <summary>The number of priority change points of a <see cref="ScheduleStrategy.Priority"/> schedule (0 for <see cref="ScheduleStrategy.Random"/>).</summary>
    public int PriorityChangePoints { get; }

    /// <summary>The steps among which a <see cref="ScheduleStrategy.Priority"/> schedule's change points fall.</summary>
    public int StepHorizon { get; } = DefaultStepHorizon;

    /// <summary>The step after which a <see cref="ScheduleStrategy.Priority"/> schedule picks at random (step 4): twice the horizon.</summary>
    private long FairAfter => 2L * StepHorizon;

    /// <summary>How many queued items (job steps, resumptions, timer firings) the runtime has run so far.</summary>
    public long Steps { get; private set; }

    /// <summary>Picks the next item's position; under the queue's lock, on the driving thread.</summary>
    private int NextIndex(WorkQueue queue)
    {
        Steps++;
        if (_priorities is null)
        {
            return _random.Next(queue.Count);
        }

        if (Steps > FairAfter)
        {
            // Step 4: a job that spins (polls, then yields) while holding the top priority would
            // starve the job it waits for forever; past the horizon, PCT has placed all its change
            // points, and the rest of the run is random, hence fair with probability 1 (Coyote's
            // prioritized strategy falls back the same way).
            return _random.Next(queue.Count);
        }

        int best = HighestPriority(queue);
        while (_nextChange < _changePoints!.Length && _changePoints[_nextChange] <= Steps)
        {
            // Step 3. Several change points may share a step; each demotes whichever job is then on top.
            _nextChange++;
            WorkItem top = queue.PeekAt(best);
            _priorities[top] = (PriorityChangePoints - _nextChange, VersionOf(top));
            best = HighestPriority(queue);
        }

        WorkItem picked = queue.PeekAt(best);
        if (picked is not Jobs.JobCell)
        {
            _priorities.Remove(picked); // step 1: runs once; a reuse of the object is another item
        }

        return best;
    }

    /// <summary>What tells one use of an item from the next: a cell's version; 0 for other items, which are dropped when picked.</summary>
    private static short VersionOf(WorkItem item) => item is Jobs.JobCell cell ? cell.Version : (short)0;

    private int HighestPriority(WorkQueue queue)
    {
        int best = 0;
        long bestPriority = long.MinValue;
        for (int i = 0; i < queue.Count; i++)
        {
            WorkItem item = queue.PeekAt(i);
            short version = VersionOf(item);
            if (!_priorities!.TryGetValue(item, out (long Priority, short Version) entry) || entry.Version != version)
            {
                entry = (_random.NextInt64(BasePriority, long.MaxValue), version); // step 1
                _priorities[item] = entry;
            }

            long priority = entry.Priority;

            if (priority > bestPriority)
            {
                best = i;
                bestPriority = priority;
            }
        }

        return best;
    }
}
