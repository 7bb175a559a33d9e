using System;
using Myriad.Coordination;
using Myriad.Internal;

namespace Myriad.Channels;

/// <summary>
/// A send case of a select (<c>case ch &lt;- v</c>); its handler is an <see cref="Action"/>, or an
/// <see cref="Action{TState}"/> with the state stored typed (see <see cref="SelectReceiveCase{T, TState}"/>).
/// </summary>
internal sealed class SelectSendCase<T, TState> : SelectCase<T>
{
    private Delegate? _handler;
    private TState _state = default!;
    private T _item = default!;

    internal static SelectSendCase<T, TState> Rent() => BoxPool<SelectSendCase<T, TState>>.Shared.Rent() ?? new();

    internal void Init(SelectOperation op, int index, Chan<T> channel, T item, TState state, Delegate? handler)
    {
        Op = op;
        Index = index;
        _channel = channel;
        _item = item;
        _state = state;
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
        _state = default!;
        _item = default!;
    }

    internal override void ReturnToPool() => BoxPool<SelectSendCase<T, TState>>.Shared.Return(this);

    internal override void RecycleThenInvoke(int slot, bool succeeded)
    {
        SelectOperation op = Op;
        Delegate? handler = _handler;
        TState state = _state;
        Clear();
        op.Recycle(this, slot);
        if (!succeeded || handler is null)
        {
            return;
        }

        if (handler is Action plain)
        {
            plain();
        }
        else
        {
            ((Action<TState>)handler)(state);
        }
    }
}
