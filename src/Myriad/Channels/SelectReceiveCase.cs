using System;
using Myriad.Coordination;
using Myriad.Internal;

namespace Myriad.Channels;

/// <summary>A receive case of a select (<c>case v := &lt;-ch</c> or <c>case v, ok := &lt;-ch</c>).</summary>
internal sealed class SelectReceiveCase<T> : SelectCase, IWaiter<T>
{
    private Chan<T> _channel = null!;
    private Delegate? _handler; // Action<T>, or Action<ReceiveResult<T>> when _reportsClose
    private bool _reportsClose;
    private T _value = default!;
    private bool _closed;
    private Exception? _closeError;
    private IWaiter<T>? _partner;
    private IWaiter<T>? _next;
    private IWaiter<T>? _prev;

    internal static SelectReceiveCase<T> Rent() => BoxPool<SelectReceiveCase<T>>.Rent() ?? new();

    internal void Init(SelectOperation op, int index, Chan<T> channel, Delegate? handler, bool reportsClose)
    {
        Op = op;
        Index = index;
        _channel = channel;
        _handler = handler;
        _reportsClose = reportsClose;
    }

    IWaiter<T>? IWaiter<T>.Next
    {
        get => _next;
        set => _next = value;
    }

    IWaiter<T>? IWaiter<T>.Prev
    {
        get => _prev;
        set => _prev = value;
    }

    public bool IsSender => false;

    public T Item => default!;

    internal override object Channel => _channel;

    internal override long LockId => _channel.LockId;

    internal override Exception? Failure =>
        _closed && (!_reportsClose || _closeError is not null) ? _closeError ?? ChannelClosedException.ForReceive() : null;

    public bool TryClaim() => Op.TryCommit(Index);

    public void Complete(T item)
    {
        _value = item;
        Op.Resolve(this);
    }

    public void CompleteClosed(Exception? error)
    {
        _closed = true;
        _closeError = error;
        Op.Resolve(this);
    }

    internal override void EnterLock() => _channel.EnterLock();

    internal override void ExitLock() => _channel.ExitLock();

    internal override bool TryPerformLocked()
    {
        switch (_channel.TryReceiveLocked(out _value, out _partner))
        {
            case Chan<T>.Status.Done:
                return true;
            case Chan<T>.Status.Closed:
                _closed = true;
                _closeError = _channel.CloseError;
                return true;
            default:
                return false;
        }
    }

    internal override void FinishPerform()
    {
        IWaiter<T>? sender = _partner;
        _partner = null;
        sender?.Complete(default!);
        Op.Resolve(this);
    }

    internal override void EnqueueLocked() => _channel.EnqueueLocked(this);

    internal override void Unlink() => _channel.RemoveWaiter(this);

    internal override void Clear()
    {
        Op = null!;
        _channel = null!;
        _handler = null;
        _value = default!;
        _closed = false;
        _closeError = null;
    }

    internal override void ReturnToPool() => BoxPool<SelectReceiveCase<T>>.Return(this);

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
