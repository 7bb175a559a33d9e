using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;
using Myriad.Scheduling;

namespace Myriad.Coordination;

/// <summary>
/// The cell behind <see cref="Job.Delay(TimeSpan, CancellationToken)"/>: a completion cell that is also
/// its own timer node (<see cref="ITimerNode"/>) and the work item that runs when it is due, on the
/// runtime the delay started from. One object per pending delay: a separate timer entry would add
/// 72 bytes to each of a million sleepers, and a collection's worth of copying.
/// </summary>
/// <remarks>
/// <para>Two kinds, as for channel waiters: without a cancelable token a plain <see cref="DelayCell"/>
/// is pooled (only the timer can complete it, exactly once); with one, a
/// fresh <see cref="CancelableDelayCell"/> lets the timer and the token race (see there). The plain
/// kind carries no token fields: a million pending sleepers pay only for what they use.</para>
/// <para>64 bytes: the cell's fields and three words of links. The runtime to run on waits in the
/// cell's <c>_aux</c> slot, which a pending cell does not use otherwise (it holds an error only once
/// completed, and the timer clears the runtime before that, under its shard's lock, when it copies it
/// out). The plain kind keeps no shard: nothing cancels it, and only a cancel asks.</para>
/// </remarks>
internal class DelayCell : SourceBox<VoidResult>, ITimerNode
{
    private TimerLinks _links;

    private protected DelayCell()
    {
    }

    /// <inheritdoc/>
    public ref TimerLinks Links => ref _links;

    /// <inheritdoc/>
    public WorkItem Target => this;

    /// <inheritdoc/>
    public JobRuntime? TimerRuntime
    {
        get => _aux as JobRuntime;
        set => _aux = value;
    }

    /// <inheritdoc/>
    public virtual TimerShard? Shard
    {
        get => null;
        set
        {
        }
    }

    /// <summary>
    /// Starts a delay on <paramref name="timers"/> (null: the clock of the current runtime);
    /// <paramref name="delay"/> is validated, finite and positive.
    /// </summary>
    internal static Job Start(TimeSpan delay, TimerQueue? timers, CancellationToken cancellationToken)
    {
        DelayCell cell = cancellationToken.CanBeCanceled
            ? new CancelableDelayCell(cancellationToken)
            : BoxPool<DelayCell>.Shared.Rent() ?? new DelayCell();

        var job = new Job(new Job<VoidResult>(cell, cell.Version));
        if (timers is null)
        {
            TimerQueue.Schedule(cell, delay);
        }
        else
        {
            timers.Schedule(cell, delay, TimerQueue.CurrentRuntime);
        }

        (cell as CancelableDelayCell)?.Register();
        return job;
    }

    /// <summary>A job that completes only if <paramref name="cancellationToken"/> fires (an infinite delay; see <see cref="InfiniteDelayCell"/>).</summary>
    internal static Job Never(CancellationToken cancellationToken)
    {
        var cell = new InfiniteDelayCell(cancellationToken);
        var job = new Job(new Job<VoidResult>(cell, cell.Version));
        cell.Register();
        return job;
    }

    internal override string Describe() => "Job.Delay";

    /// <summary>The timer fired.</summary>
    internal override void Execute(PerThread state) => TrySetResult(default);

    private protected override void Release()
    {
        ResetBox();
        BoxPool<DelayCell>.Shared.Return(this);
    }
}

/// <summary>
/// A delay with a cancelable token: never pooled (a poolable operation is never also cancelable).
/// The timer and the token race through <c>_claim</c> (0 pending, 1 claimed). The token's winner
/// unlinks the entry from its wheel slot at once (so a canceled long delay frees its memory now, not
/// at its due time); the timer's winner unregisters nothing (the consumer does).
/// </summary>
internal sealed class CancelableDelayCell(CancellationToken cancellationToken) : DelayCell
{
    private static readonly Action<object?> s_onCanceled = static s => ((CancelableDelayCell)s!).OnCanceled();

    private readonly CancellationToken _cancellationToken = cancellationToken;
    private CancellationTokenRegistration _registration;
    private TimerShard? _shard;
    private int _claim;

    /// <summary>The shard that holds the cell while scheduled: the token's winner unlinks it there.</summary>
    public override TimerShard? Shard
    {
        get => Volatile.Read(ref _shard);
        set => Volatile.Write(ref _shard, value);
    }

    /// <summary>Registers with the token (after the timer is scheduled, so a cancel finds it to unlink).</summary>
    internal void Register()
    {
        if (_cancellationToken.CanBeCanceled)
        {
            _registration = _cancellationToken.UnsafeRegister(s_onCanceled, this);
        }
    }

    /// <summary>The timer fired.</summary>
    internal override void Execute(PerThread state)
    {
        if (Interlocked.Exchange(ref _claim, 1) == 0)
        {
            TrySetResult(default);
        }
    }

    private void OnCanceled()
    {
        if (Interlocked.Exchange(ref _claim, 1) == 0)
        {
            TimerQueue.Cancel(this);
            TrySetException(ThrowHelper.Canceled(_cancellationToken));
        }
    }

    private protected override void Release()
    {
        _registration.Unregister();
        InvalidateTokens();
    }
}

/// <summary>
/// The cell of an infinite delay: on no clock, it completes only when its token fires. It is not a
/// <see cref="DelayCell"/> on purpose: a deterministic runtime's deadlock check takes a job awaiting
/// a <see cref="DelayCell"/> for one whose timer, on another clock, may still fire, and keeps waiting.
/// An infinite delay never fires, so like a receive that nobody sends to, only a cancel can end it:
/// a run whose jobs all wait on such things is a deadlock, and is reported instead of hanging.
/// </summary>
internal sealed class InfiniteDelayCell(CancellationToken cancellationToken) : SourceBox<VoidResult>
{
    private static readonly Action<object?> s_onCanceled = static s => ((InfiniteDelayCell)s!).OnCanceled();

    private readonly CancellationToken _cancellationToken = cancellationToken;
    private CancellationTokenRegistration _registration;

    /// <summary>Registers with the token; one that can never be canceled leaves the delay pending forever.</summary>
    internal void Register()
    {
        if (_cancellationToken.CanBeCanceled)
        {
            _registration = _cancellationToken.UnsafeRegister(s_onCanceled, this);
        }
    }

    internal override string Describe() => "Job.Delay(infinite)";

    /// <summary>The token is the only completer, so nothing races it.</summary>
    private void OnCanceled() => TrySetException(ThrowHelper.Canceled(_cancellationToken));

    private protected override void Release()
    {
        _registration.Unregister();
        InvalidateTokens();
    }
}
