using System;
using Myriad.Coordination;
using Myriad.Internal;

namespace Myriad.Channels;

/// <summary>
/// A receive case of a select (<c>case v := &lt;-ch</c> or <c>case v, ok := &lt;-ch</c>). Its handler
/// takes a <typeparamref name="TState"/> first when it was added with state (<see cref="NoState"/>
/// otherwise): the state is stored typed, so a <c>static</c> handler needs no closure and no boxing.
/// </summary>
internal sealed class SelectReceiveCase<T, TState> : SelectCase<T>
{
    internal override Type? ReceivedType => typeof(T);

    // Action<T> or Action<TState, T>; Action<ReceiveResult<T>> or Action<TState, ReceiveResult<T>> when _reportsClose.
    private Delegate? _handler;
    private TState _state = default!;
    private bool _reportsClose;
    private T _value = default!;

    internal static SelectReceiveCase<T, TState> Rent() => BoxPool<SelectReceiveCase<T, TState>>.Shared.Rent() ?? new();

    internal void Init(SelectOperation op, int index, Chan<T> channel, TState state, Delegate? handler, bool reportsClose)
    {
        Op = op;
        Index = index;
        _channel = channel;
        _state = state;
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

    internal override void OfferToValueSink()
    {
        if (Op.ValueSink is SelectValueSink<T> sink)
        {
            sink.Set(_value, received: !_closed);
        }
    }

    internal override void GiveBackItem()
    {
        if (!_closed)
        {
            _channel.GiveBack(_value);
        }
    }

    internal override bool TryPerformLocked() => Fired(_channel.TryReceiveLocked(out _value, out _partner));

    internal override void FinishPerform()
    {
        IWaiter<T>? sender = _partner;
        _partner = null;
        sender?.Complete(default!);
        _channel.AfterReceive();
        Op.Resolve(this);
    }

    internal override void Clear()
    {
        ClearShared();
        _handler = null;
        _state = default!;
        _value = default!;
    }

    internal override void ReturnToPool() => BoxPool<SelectReceiveCase<T, TState>>.Shared.Return(this);

    internal override void RecycleThenInvoke(int slot, bool succeeded)
    {
        SelectOperation op = Op;
        Delegate? handler = _handler;
        TState state = _state;
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
            ReceiveResult<T> result = closed ? default : new ReceiveResult<T>(value);
            if (handler is Action<ReceiveResult<T>> plain)
            {
                plain(result);
            }
            else
            {
                ((Action<TState, ReceiveResult<T>>)handler)(state, result);
            }
        }
        else if (handler is Action<T> plain)
        {
            plain(value);
        }
        else
        {
            ((Action<TState, T>)handler)(state, value);
        }
    }
}

/// <summary>The state type of a case added without state.</summary>
internal readonly struct NoState;
