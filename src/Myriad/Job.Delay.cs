using System;
using System.Threading;
using Myriad.Coordination;

namespace Myriad;

public readonly partial struct Job
{
    /// <summary>
    /// A job that completes after <paramref name="delay"/> on the clock of the runtime it starts on
    /// (<see cref="Scheduling.JobRuntime.TimeProvider"/>; the system clock outside any runtime).
    /// Started from a runtime thread, it resumes its awaiter on that runtime; otherwise on the .NET
    /// thread pool.
    /// </summary>
    /// <param name="delay">How long to wait: zero completes at once; <see cref="Timeout.InfiniteTimeSpan"/> never
    /// completes unless canceled.</param>
    /// <param name="cancellationToken">Ends the wait early with <see cref="OperationCanceledException"/>.</param>
    /// <remarks>Timers live in hierarchical timing wheels (O(1) to start, cancel and fire), one per
    /// core for the system clock, served by a background thread that hands due timers to their
    /// runtimes in batches. Without a cancelable token a delay allocates nothing in steady state; a
    /// canceled delay leaves its wheel at once. Resolution is one millisecond, rounded up: a delay
    /// never ends early. On a <see cref="Scheduling.DeterministicRuntime"/> the clock is virtual and
    /// jumps ahead whenever nothing else can run.
    /// <para>The delay completes on the runtime it started on, and only while that runtime runs:
    /// awaited from elsewhere (another runtime, a plain thread), a delay started on a
    /// <see cref="Scheduling.CurrentThreadRuntime"/> completes when that runtime is next driven (or
    /// disposed), and one started on a <see cref="Scheduling.DeterministicRuntime"/>, whose virtual
    /// time moves only while it runs, never completes once that runtime stopped running for good
    /// (disposed, or no longer driven). Start a delay in the code that awaits it.</para></remarks>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> is negative (other than
    /// infinite) or longer than about 49.7 days.</exception>
    public static Job Delay(TimeSpan delay, CancellationToken cancellationToken = default)
    {
        TimerQueue.ThrowIfInvalid(delay, nameof(delay));
        return DelayCore(delay, null, cancellationToken);
    }

    /// <summary>
    /// A job that completes after <paramref name="delay"/> as measured by <paramref name="timeProvider"/>
    /// (for example a <c>FakeTimeProvider</c> that a test advances by hand). It resumes its awaiter on
    /// the runtime it started on (the .NET thread pool outside any runtime); see
    /// <see cref="Delay(TimeSpan, CancellationToken)"/>.
    /// </summary>
    /// <param name="delay">How long to wait: zero completes at once; <see cref="Timeout.InfiniteTimeSpan"/> never
    /// completes unless canceled.</param>
    /// <param name="timeProvider">The clock that measures the delay.</param>
    /// <param name="cancellationToken">Ends the wait early with <see cref="OperationCanceledException"/>.</param>
    /// <exception cref="ArgumentNullException"><paramref name="timeProvider"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> is negative (other than
    /// infinite) or longer than about 49.7 days.</exception>
    public static Job Delay(TimeSpan delay, TimeProvider timeProvider, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(timeProvider);
        TimerQueue.ThrowIfInvalid(delay, nameof(delay));
        return DelayCore(delay, TimerQueue.For(timeProvider), cancellationToken);
    }

    /// <summary>A job that completes after <paramref name="millisecondsDelay"/> milliseconds (-1: never); see <see cref="Delay(TimeSpan, CancellationToken)"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="millisecondsDelay"/> is less than -1.</exception>
    public static Job Delay(int millisecondsDelay, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(millisecondsDelay, -1);
        return Delay(TimeSpan.FromMilliseconds(millisecondsDelay), cancellationToken);
    }

    private static Job DelayCore(TimeSpan delay, TimerQueue? timers, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return FromCanceled(cancellationToken);
        }

        if (delay == TimeSpan.Zero)
        {
            return CompletedJob;
        }

        return delay == Timeout.InfiniteTimeSpan ? DelayCell.Never(cancellationToken) : DelayCell.Start(delay, timers, cancellationToken);
    }
}
