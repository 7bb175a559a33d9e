using System;
using Myriad.Coordination;

namespace Myriad.Channels;

/// <summary>
/// What the receive and send cases of a select share: the channel, the queue links of the case's
/// <c>sudog</c> role, the claim (which is the select's commit), and the outcome of a closed channel.
/// </summary>
internal abstract class SelectCase<T> : SelectCase, IWaiter<T>
{
    private IWaiter<T>? _next;
    private IWaiter<T>? _prev;

    /// <summary>The channel of this use.</summary>
    private protected Chan<T> _channel = null!;

    /// <summary>After a successful poll: the counterpart waiter to complete once the locks are released.</summary>
    private protected IWaiter<T>? _partner;

    /// <summary>Whether the case fired because the channel is closed; with the close error, if any.</summary>
    private protected bool _closed;
    private protected Exception? _closeError;

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

    bool IWaiter<T>.InHostQueue { get; set; }

    public abstract bool IsSender { get; }

    public abstract T Item { get; }

    internal override object Channel => _channel;

    /// <summary>Claiming a case is committing its select (step 5 of the commit protocol).</summary>
    /// <remarks>A select whose job's runtime can no longer run it commits to nothing and ends
    /// canceled instead (see <see cref="SelectOperation.TryCommitForHandOff"/>).</remarks>
    public bool TryClaim() => Op.TryCommitForHandOff(Index);

    public abstract void Complete(T item);

    public void CompleteClosed(Exception? error)
    {
        _closed = true;
        _closeError = error;
        Op.Resolve(this);
    }

    internal override void EnterLock() => _channel.EnterLock();

    internal override bool TryEnterLock() => _channel.TryEnterLock();

    internal override void ExitLock() => _channel.ExitLock();

    internal override void EnqueueLocked() => _channel.EnqueueLocked(this);

    internal override void Unlink() => _channel.RemoveWaiter(this);

    /// <summary>Maps a poll's status to "fired" (done, or closed: a closed channel's case is always ready).</summary>
    private protected bool Fired(Chan<T>.Status status)
    {
        if (status == Chan<T>.Status.Closed)
        {
            _closed = true;
            _closeError = _channel.CloseError;
        }

        return status != Chan<T>.Status.WouldBlock;
    }

    /// <summary>Clears what this base holds; the derived case clears the rest.</summary>
    private protected void ClearShared()
    {
        Op = null!;
        _channel = null!;
        _partner = null;
        _closed = false;
        _closeError = null;
    }
}
