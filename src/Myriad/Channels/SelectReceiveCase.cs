using System;
using Myriad.Coordination;
using Myriad.Internal;

namespace Myriad.Channels;

/// <summary>A receive case of a select (<c>case v := &lt;-ch</c> or <c>case v, ok := &lt;-ch</c>).</summary>
internal sealed class SelectReceiveCase<T> : SelectCase<T>
{
    private Delegate? _handler; // Action<T>, or Action<ReceiveResult<T>> when _reportsClose
    private bool _reportsClose;
    private T _value = default!;

    internal static SelectReceiveCase<T> Rent() => BoxPool<SelectReceiveCase<T>>.Shared.Rent() ?? new();

    internal void Init(SelectOperation op, int index, Chan<T> channel, Delegate? handler, bool reportsClose)
    {
        Op = op;
        Index = index;
        _channel = channel;
        _handler = handler;
        _reportsClose = reportsClose;
    }

    public override bool IsSender => false;

    public override T Item => default!;

    internal override Exception? Failure =>
        _closed && (!_reportsClose || _closeError is not null) ? _closeError ?? ChanErrors.ForReceive() : null;

    public override void Complete(T item)
    {
        _value = item;
        Op.Resolve(this);
    }

    internal override bool TryPerformLocked() => Fired(_channel.TryReceiveLocked(out _value, out _partner));

    internal override void FinishPerform()
    {
        IWaiter<T>? sender = _partner;
        _partner = null;
        sender?.Complete(default!);
        Op.Resolve(this);
    }

    internal override void Clear()
    {
        ClearShared();
        _handler = null;
        _value = default!;
    }

    internal override void ReturnToPool() => BoxPool<SelectReceiveCase<T>>.Shared.Return(this);

    internal override void RecycleThenInvoke(int slot, bool succeeded)
    {
        SelectOperation op = Op;
        Delegate? handler = _handler;
        T value = _value;
        bool closed = _closed;
        bool reportsClose = _reportsClose;
        Clear();
        op.Recycle(this, slot);
        if (!succeeded || handler is null)
        {
            return;
        }

        if (reportsClose)
        {
            ((Action<ReceiveResult<T>>)handler)(closed ? default : new ReceiveResult<T>(value));
        }
        else
        {
            ((Action<T>)handler)(value);
        }
    }
}
