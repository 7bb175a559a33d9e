namespace Myriad.Scheduling;

/// <summary>How a <see cref="DeterministicRuntime"/> picks the next queued item; either way the choice is a function of the seed.</summary>
public enum ScheduleStrategy
{
    /// <summary>Uniformly at random among the queued items at every step.</summary>
    Random,

    /// <summary>
    /// Probabilistic concurrency testing (PCT; Burckhardt, Kothari, Musuvathi and Nagarakatte,
    /// ASPLOS 2010): every job gets a random priority when it is first queued, the runtime always
    /// runs the queued job of highest priority, and at a few randomly chosen steps (the priority
    /// change points) the job about to run drops below every other. A bug that needs <c>d</c>
    /// ordering constraints is found by one run with probability at least 1/(n·k^(d−1)) for n jobs
    /// and k steps when the run has d−1 change points; random choice at every step has no such bound.
    /// Past twice the step horizon the schedule turns random, so that a job that polls and yields
    /// cannot starve the others forever.
    /// </summary>
    Priority,
}
