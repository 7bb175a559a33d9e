using System;
using Myriad.Scheduling;

namespace Myriad.Testing;

/// <summary>
/// A test body failed under one of the schedules <see cref="ScheduleExplorer"/> tried. The message
/// names the seed and the one line that replays the failing schedule; the failure itself is the
/// <see cref="Exception.InnerException"/>.
/// </summary>
public sealed class ScheduleExplorationException : Exception
{
    /// <summary>Creates the exception with a message of your own (no schedule attached).</summary>
    public ScheduleExplorationException(string message)
        : base(message)
    {
        ReplayLine = string.Empty;
    }

    internal ScheduleExplorationException(int seed, ScheduleStrategy strategy, int priorityChangePoints, int stepHorizon, int runs, Exception failure)
        : base(BuildMessage(seed, strategy, priorityChangePoints, stepHorizon, runs, failure), failure)
    {
        Seed = seed;
        Strategy = strategy;
        PriorityChangePoints = priorityChangePoints;
        StepHorizon = stepHorizon;
        Runs = runs;
        ReplayLine = BuildReplayLine(seed, strategy, priorityChangePoints, stepHorizon);
    }

    /// <summary>The seed of the failing run.</summary>
    public int Seed { get; }

    /// <summary>The strategy of the failing run.</summary>
    public ScheduleStrategy Strategy { get; }

    /// <summary>The priority change points of the failing run (meaningful for <see cref="ScheduleStrategy.Priority"/>).</summary>
    public int PriorityChangePoints { get; }

    /// <summary>The step horizon of the failing run (meaningful for <see cref="ScheduleStrategy.Priority"/>).</summary>
    public int StepHorizon { get; }

    /// <summary>How many runs the explorer made, the failing one included.</summary>
    public int Runs { get; }

    /// <summary>A line of C# that replays the failing run: <c>ScheduleExplorer.Replay(body, ...)</c> with this run's parameters.</summary>
    public string ReplayLine { get; }

    internal static string BuildReplayLine(int seed, ScheduleStrategy strategy, int priorityChangePoints, int stepHorizon) =>
        strategy == ScheduleStrategy.Priority
            ? $"ScheduleExplorer.Replay(body, seed: {seed}, ScheduleStrategy.Priority, priorityChangePoints: {priorityChangePoints}, stepHorizon: {stepHorizon});"
            : $"ScheduleExplorer.Replay(body, seed: {seed});";

    private static string BuildMessage(int seed, ScheduleStrategy strategy, int priorityChangePoints, int stepHorizon, int runs, Exception failure) =>
        $"Seed {seed} ({strategy} schedule, run {runs}) failed with {failure.GetType().Name}: {failure.Message}{Environment.NewLine}" +
        $"Replay it with: {BuildReplayLine(seed, strategy, priorityChangePoints, stepHorizon)}";
}
