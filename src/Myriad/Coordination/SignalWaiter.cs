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
        : "WaitGroup.WaitAsync";

    public override void Complete(VoidResult item) => TrySetResult(Value);

    public override void CompleteClosed(Exception? error) =>
        TrySetException(error ?? new InvalidOperationException("The primitive this job waited on was shut down."));

    private protected override void ResetForPool() => Value = default!;

    private protected override void ReturnToPool() => BoxPool<SignalWaiter<TResult>>.Shared.Return(this);
}
