using System;
using System.Collections.Generic;
using Myriad.Diagnostics;

namespace Myriad.Scheduling;

/// <summary>
/// Thrown by <c>Run</c> (or a blocking <c>Wait</c>) on a <see cref="DeterministicRuntime"/> when the
/// job it waits for can never complete: nothing is runnable, no timer of the runtime's virtual clock
/// is pending, and every live job of the runtime is suspended on something only the runtime's own
/// jobs could complete (a channel, a select, a mutex, a semaphore, a wait group, a promise, another
/// of its jobs). Like Go's "all goroutines are asleep - deadlock!", the message lists every live
/// job: its method and what it waits on.
/// </summary>
/// <remarks>
/// <para>A job suspended on something that another thread may complete (a Task or other non-Myriad
/// awaitable, a job of another runtime, a delay on another clock) means the runtime cannot prove a
/// deadlock: it keeps waiting, as any runtime does. The runtime also gives other threads a short
/// grace period (<see cref="DeterministicRuntime.DeadlockGracePeriod"/>) to queue work before it
/// throws, since a channel or promise may be fed from outside.</para>
/// <para>A <see cref="CurrentThreadRuntime"/> never throws it: its jobs routinely wait on real
/// timers and on channels fed by other threads and runtimes, so an idle current-thread runtime
/// cannot tell a deadlock from a wait. Run the program on a <see cref="DeterministicRuntime"/> to have
/// deadlocks reported.</para>
/// </remarks>
public sealed class DeadlockException : InvalidOperationException
{
    /// <summary>Creates the exception with a message of your own and no job list.</summary>
    public DeadlockException(string message)
        : base(message)
    {
        LiveJobs = [];
    }

    internal DeadlockException(string runtime, IReadOnlyList<LiveJob> jobs, Jobs.JobCell? waitedOn = null)
        : base(Describe(runtime, jobs, waitedOn))
    {
        LiveJobs = jobs;
    }

    /// <summary>
    /// The message: the live jobs, and what the blocking wait is for when that is not one of them
    /// (<paramref name="waitedOn"/>, given only then: a promise's job, or a spawned job whose body
    /// returned another job, are not tracked state machines, and the list alone would not say what
    /// <c>Run</c> waits on).
    /// </summary>
    private static string Describe(string runtime, IReadOnlyList<LiveJob> jobs, Jobs.JobCell? waitedOn)
    {
        string text = $"Deadlock: all jobs of {runtime} are asleep, and nothing outside it can wake them. {JobDiagnostics.Format(jobs).TrimEnd()}";
        return waitedOn is null
            ? text
            : $"{text}{Environment.NewLine}The blocking wait is for a {waitedOn.Describe()}, which none of them completes.";
    }

    /// <summary>The live jobs of the runtime when the deadlock was found, oldest first: each one's method and what it waits on.</summary>
    public IReadOnlyList<LiveJob> LiveJobs { get; }
}
