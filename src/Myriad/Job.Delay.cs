using System;
using System.Threading;
using Myriad.Coordination;

namespace Myriad;

public readonly partial struct Job
{
    /// <summary>
    /// A job that completes after <paramref name="delay"/>. Started from a runtime thread, it resumes
    /// its awaiter on that runtime; otherwise on the .NET thread pool.
    /// </summary>
    /// <param name="delay">How long to wait: zero completes at once; <see cref="Timeout.InfiniteTimeSpan"/> never
    /// completes unless canceled.</param>
    /// <param name="cancellationToken">Ends the wait early with <see cref="OperationCanceledException"/>.</param>
    /// <remarks>Timers live in one process-wide heap served by a background thread (O(log n) per timer);
    /// without a cancelable token a delay allocates nothing in steady state. Resolution is that of the
    /// operating system's timed waits (about a millisecond on Linux).</remarks>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> is negative (other than
    /// infinite) or longer than about 49.7 days.</exception>
    public static Job Delay(TimeSpan delay, CancellationToken cancellationToken = default)
    {
        TimerQueue.ThrowIfInvalid(delay, nameof(delay));
        if (cancellationToken.IsCancellationRequested)
        {
            return FromCanceled(cancellationToken);
        }

        if (delay == TimeSpan.Zero)
        {
            return CompletedJob;
        }

        return delay == Timeout.InfiniteTimeSpan ? DelayCell.Never(cancellationToken) : DelayCell.Start(delay, cancellationToken);
    }

    /// <summary>A job that completes after <paramref name="millisecondsDelay"/> milliseconds (-1: never); see <see cref="Delay(TimeSpan, CancellationToken)"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="millisecondsDelay"/> is less than -1.</exception>
    public static Job Delay(int millisecondsDelay, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(millisecondsDelay, -1);
        return Delay(TimeSpan.FromMilliseconds(millisecondsDelay), cancellationToken);
    }
}
