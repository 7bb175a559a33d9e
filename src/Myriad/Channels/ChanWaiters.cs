using System;
using Myriad.Coordination;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Channels;

/// <summary>A suspended <see cref="Chan{T}.ReceiveAsync"/>: completes with the item, or throws once the channel is closed and drained.</summary>
internal sealed class ReceiveWaiter<T> : QueuedWaiter<T, T>
{
    private protected override void ReturnToPool() => BoxPool<ReceiveWaiter<T>>.Shared.Return(this);

    public override bool IsSender => false;

    public override T Item => default!;

    internal override string Describe() => $"Chan<{Diagnostics.CompilerNames.DescribeType(typeof(T))}>.ReceiveAsync";

    public override void Complete(T item) => TrySetResult(item);

    public override void CompleteClosed(Exception? error) =>
        TrySetException(error ?? ChanErrors.ForReceive());

    /// <summary>An item handed to a job that was abandoned goes back to the channel.</summary>
    internal override void GiveBackUnconsumed()
    {
        if (ErrorUnchecked is null && Host is Chan<T> channel)
        {
            channel.GiveBack(GetResult(Version));
        }
    }
}

/// <summary>A suspended <see cref="Chan{T}.ReceiveOkAsync"/>: completes with <c>(item, true)</c>, or <c>(default, false)</c> on a clean close.</summary>
internal sealed class ReceiveOkWaiter<T> : QueuedWaiter<T, ReceiveResult<T>>
{
    private protected override void ReturnToPool() => BoxPool<ReceiveOkWaiter<T>>.Shared.Return(this);

    public override bool IsSender => false;

    public override T Item => default!;

    internal override string Describe() => $"Chan<{Diagnostics.CompilerNames.DescribeType(typeof(T))}>.ReceiveOkAsync";

    public override void Complete(T item) => TrySetResult(new ReceiveResult<T>(item));

    /// <summary>Whether this waiter was rented by <paramref name="channel"/> (see <c>Chan{T}.TryWithdrawReceiver</c>).</summary>
    internal bool WaitsIn(Chan<T> channel) => ReferenceEquals(Host, channel);

    /// <summary>An item handed to a job that was abandoned goes back to the channel.</summary>
    internal override void GiveBackUnconsumed()
    {
        if (ErrorUnchecked is null && Host is Chan<T> channel && GetResult(Version) is { Ok: true } result)
        {
            channel.GiveBack(result.Value);
        }
    }

    public override void CompleteClosed(Exception? error)
    {
        if (error is null)
        {
            TrySetResult(default);
        }
        else
        {
            TrySetException(error);
        }
    }
}

/// <summary>A suspended <see cref="Chan{T}.SendAsync"/>: offers its item, completes when a receiver (or the buffer) took it.</summary>
internal sealed class SendWaiter<T> : QueuedWaiter<T, VoidResult>
{
    /// <summary>The item offered (only senders carry one: a receive waiter is smaller).</summary>
    private T _item = default!;

    private protected override void ReturnToPool() => BoxPool<SendWaiter<T>>.Shared.Return(this);

    public override bool IsSender => true;

    public override T Item => _item;

    /// <summary>A waiting send of <paramref name="item"/>; under the channel's lock.</summary>
    internal static SendWaiter<T> Rent(T item, Chan<T> channel, System.Threading.CancellationToken cancellationToken)
    {
        SendWaiter<T> waiter = Rent<SendWaiter<T>>(channel, cancellationToken);
        waiter._item = item;
        return waiter;
    }

    private protected override void ResetForPool() => _item = default!;

    internal override string Describe() => $"Chan<{Diagnostics.CompilerNames.DescribeType(typeof(T))}>.SendAsync";

    public override void Complete(T item) => TrySetResult(default);

    public override void CompleteClosed(Exception? error) =>
        TrySetException(ChanErrors.ForSend(error));
}
