using System;
using Myriad.Scheduling;

namespace Myriad.Testing;

/// <summary>What <see cref="ScheduleExplorer"/> explores: which seeds, under which schedule strategy.</summary>
public sealed class ExplorationOptions
{
    /// <summary>
    /// Step horizon of the first <see cref="ScheduleStrategy.Priority"/> run when
    /// <see cref="StepHorizon"/> is not set; later runs use the longest run seen so far, up to
    /// <see cref="MaxStepHorizon"/>. A small test
    /// body (a few jobs, a few dozen awaits) runs some tens to hundreds of steps.
    /// </summary>
    internal const int InitialStepHorizon = 100;

    /// <summary>
    /// Default of <see cref="MaxStepHorizon"/>: the bound Coyote puts on the unfair (priority-driven)
    /// steps of a run (its <c>MaxUnfairSchedulingSteps</c>, 10,000). A polling body's runs reach
    /// twice the horizon, so this also bounds how long each of its runs gets.
    /// </summary>
    internal const int DefaultMaxStepHorizon = 10_000;

    /// <summary>How many seeds to run (default 100).</summary>
    public int Seeds { get; init; } = 100;

    /// <summary>The first seed; runs use <see cref="FirstSeed"/>, <see cref="FirstSeed"/> + 1, and so on (default 0).</summary>
    public int FirstSeed { get; init; }

    /// <summary>How each run's runtime picks the next queued item (default <see cref="ScheduleStrategy.Random"/>).</summary>
    public ScheduleStrategy Strategy { get; init; } = ScheduleStrategy.Random;

    /// <summary>For <see cref="ScheduleStrategy.Priority"/>: priority change points per run (PCT's d − 1; default 2, for bugs of depth up to 3).</summary>
    public int PriorityChangePoints { get; init; } = 2;

    /// <summary>
    /// For <see cref="ScheduleStrategy.Priority"/>: the steps among which the change points fall. Null
    /// (the default): measured, each run using the longest run seen so far (the first one
    /// <c>100</c>, at most <see cref="MaxStepHorizon"/>); the replay line of a failure names the value used.
    /// </summary>
    public int? StepHorizon { get; init; }

    /// <summary>
    /// For <see cref="ScheduleStrategy.Priority"/> with a measured <see cref="StepHorizon"/>: the most
    /// the horizon grows to (default 10,000). A body that polls (checks a flag, yields, checks again)
    /// runs until its schedule turns random at twice the horizon, so each of its runs is longer than
    /// the one before; this bounds that growth.
    /// </summary>
    public int MaxStepHorizon { get; init; } = DefaultMaxStepHorizon;

    internal void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(Seeds);
        ArgumentOutOfRangeException.ThrowIfNegative(PriorityChangePoints);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(MaxStepHorizon);
        if (StepHorizon is { } horizon)
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(horizon, nameof(StepHorizon));
        }

        if (Strategy is not (ScheduleStrategy.Random or ScheduleStrategy.Priority))
        {
            throw new ArgumentOutOfRangeException(nameof(Strategy), Strategy, "Unknown schedule strategy.");
        }

        if ((long)FirstSeed + Seeds - 1 > int.MaxValue)
        {
            throw new ArgumentOutOfRangeException(nameof(Seeds), Seeds, "FirstSeed + Seeds - 1 must not pass int.MaxValue.");
        }
    }
}
