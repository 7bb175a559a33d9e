using System;
using Myriad.Coordination;
using Myriad.Internal;

namespace Myriad.Channels;

/// <summary>A send case of a select (<c>case ch &lt;- v</c>).</summary>
internal sealed class SelectSendCase<T> : SelectCase, IWaiter<T>
{
    private Chan<T> _channel = null!;
    private Action? _handler;
    private T _item = default!;
    private bool _closed;
    private Exception? _closeError;
    private IWaiter<T>? _partner;
    private IWaiter<T>? _next;
    private IWaiter<T>? _prev;

    internal static SelectSendCase<T> Rent() => BoxPool<SelectSendCase<T>>.Rent() ?? new();

    internal void Init(SelectOperation op, int index, Chan<T> channel, T item, Action? handler)
    {
        Op = op;
        Index = index;
        _channel = channel;
        _item = item;
        _handler = handler;
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

    public bool IsSender => true;

    public T Item => _item;

    internal override object Channel => _channel;

    internal override long LockId => _channel.LockId;

    internal override Exception? Failure => _closed ? ChannelClosedException.ForSend(_closeError) : null;

    public bool TryClaim() => Op.TryCommit(Index);

    public void Complete(T item) => Op.Resolve(this);

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
        switch (_channel.TrySendLocked(_item, out _partner))
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
        IWaiter<T>? receiver = _partner;
        _partner = null;
        receiver?.Complete(_item);
        Op.Resolve(this);
    }

    internal override void EnqueueLocked() => _channel.EnqueueLocked(this);

    internal override void Unlink() => _channel.RemoveWaiter(this);

    internal override void Clear()
    {
        Op = null!;
        _channel = null!;
        _handler = null;
        _item = default!;
        _closed = false;
        _closeError = null;
    }

    internal override void ReturnToPool() => BoxPool<SelectSendCase<T>>.Return(this);

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
