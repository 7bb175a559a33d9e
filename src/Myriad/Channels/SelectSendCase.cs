using System;
using Myriad.Coordination;
using Myriad.Internal;

namespace Myriad.Channels;

/// <summary>A send case of a select (<c>case ch &lt;- v</c>).</summary>
internal sealed class SelectSendCase<T> : SelectCase<T>
{
    private Action? _handler;
    private T _item = default!;

    internal static SelectSendCase<T> Rent() => BoxPool<SelectSendCase<T>>.Shared.Rent() ?? new();

    internal void Init(SelectOperation op, int index, Chan<T> channel, T item, Action? handler)
    {
        Op = op;
        Index = index;
        _channel = channel;
        _item = item;
        _handler = handler;
    }

    public override bool IsSender => true;

    public override T Item => _item;

    internal override Exception? Failure => _closed ? ChanErrors.ForSend(_closeError) : null;

    public override void Complete(T item) => Op.Resolve(this);

    internal override bool TryPerformLocked() => Fired(_channel.TrySendLocked(_item, out _partner));

    internal override void FinishPerform()
    {
        IWaiter<T>? receiver = _partner;
        _partner = null;
        receiver?.Complete(_item);
        Op.Resolve(this);
    }

    internal override void Clear()
    {
        ClearShared();
        _handler = null;
        _item = default!;
    }

    internal override void ReturnToPool() => BoxPool<SelectSendCase<T>>.Shared.Return(this);

    internal override void RecycleThenInvoke(int slot, bool succeeded)
    {
        SelectOperation op = Op;
        Action? handler = _handler;
        Clear();
        op.Recycle(this, slot);
        if (succeeded)
        {
            handler?.Invoke();
        }
    }
}
