using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Coordination;

/// <summary>
/// A suspended wait on a coordination primitive (a wait-group wait, a lock or a permit request):
/// nothing flows through the queue; the waiter completes with <see cref="Value"/>, which the host may
/// set while it holds the claim (a mutex stamps the releaser of the lock it hands over).
/// </summary>
internal sealed class SignalWaiter<TResult> : QueuedWaiter<VoidResult, TResult>
{
    internal static SignalWaiter<TResult> Rent(IWaiterHost<VoidResult> host, CancellationToken cancellationToken) =>
        Rent<SignalWaiter<TResult>>(host, cancellationToken);

    /// <summary>What the waiter completes with. Written by the claimer before <see cref="Complete"/>.</summary>
    internal TResult Value = default!;

    public override bool IsSender => false;

    public override VoidResult Item => default;

    internal override string Describe() =>
        typeof(TResult) == typeof(JobMutex.Releaser) ? "JobMutex.LockAsync"
        : typeof(TResult) == typeof(JobSemaphore.Releaser) ? "JobSemaphore.AcquireAsync"
        : Host is JobSemaphore ? "JobSemaphore.WaitAsync"
        : "WaitGroup.WaitAsync";

    public override void Complete(VoidResult item) => TrySetResult(Value);

    public override void CompleteClosed(Exception? error) =>
        TrySetException(error ?? new InvalidOperationException("The primitive this job waited on was shut down."));

    private protected override void ResetForPool() => Value = default!;

    /// <summary>A lock or a permit handed to a job that was abandoned goes back: the releaser is disposed.</summary>
    internal override void GiveBackUnconsumed()
    {
        if (ErrorUnchecked is not null)
        {
            return; // canceled or shut down: nothing was handed over
        }

        TResult value = Value;
        object? host = Host; // read before the waiter is recycled
        _ = GetResult(Version); // consumed on the abandoned job's behalf (the waiter is recycled)
        if (value is IDisposable owned)
        {
            owned.Dispose(); // JobMutex.Releaser, JobSemaphore.Releaser
        }
        else if (host is JobSemaphore semaphore)
        {
            semaphore.Release(); // JobSemaphore.WaitAsync's permit, which has no releaser
        }

        // A wait-group wait has nothing to give back.
    }

    private protected override void ReturnToPool() => BoxPool<SignalWaiter<TResult>>.Shared.Return(this);
}
