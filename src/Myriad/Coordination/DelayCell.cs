using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Coordination;

/// <summary>
/// The cell behind <see cref="Job.Delay(TimeSpan, CancellationToken)"/>: a completion cell that is also
/// the work item its <see cref="TimerEntry"/> runs when due, on the runtime the delay started from.
/// </summary>
/// <remarks>
/// <para>Two kinds, as for channel waiters: without a cancelable token the cell and its entry are
/// pooled together (only the timer can complete it, exactly once); with one, the cell is fresh and
/// the timer and the token race through <c>_claim</c> (0 pending, 1 claimed). The token's winner
/// unlinks the entry from its wheel slot at once (so a canceled long delay frees its memory now, not
/// at its due time); the timer's winner unregisters nothing (the consumer does).</para>
/// </remarks>
internal sealed class DelayCell : SourceBox<VoidResult>
{
    private static readonly Action<object?> s_onCanceled = static s => ((DelayCell)s!).OnCanceled();

    private readonly TimerEntry _entry;
    private CancellationToken _cancellationToken;
    private CancellationTokenRegistration _registration;
    private int _claim;

    private DelayCell() => _entry = new TimerEntry(this);

    /// <summary>
    /// Starts a delay on <paramref name="timers"/> (null: the clock of the current runtime);
    /// <paramref name="delay"/> is validated, finite and positive.
    /// </summary>
    internal static Job Start(TimeSpan delay, TimerQueue? timers, CancellationToken cancellationToken)
    {
        DelayCell cell;
        if (cancellationToken.CanBeCanceled)
        {
            cell = new DelayCell { _cancellationToken = cancellationToken };
        }
        else
        {
            cell = BoxPool<DelayCell>.Shared.Rent() ?? new DelayCell();
        }

        var job = new Job(new Job<VoidResult>(cell, cell.Version));
        if (timers is null)
        {
            TimerQueue.Schedule(cell._entry, delay);
        }
        else
        {
            timers.Schedule(cell._entry, delay, TimerQueue.CurrentRuntime);
        }
        if (cancellationToken.CanBeCanceled)
        {
            cell._registration = cancellationToken.UnsafeRegister(s_onCanceled, cell);
        }

        return job;
    }

    /// <summary>A job that completes only if <paramref name="cancellationToken"/> fires (an infinite delay).</summary>
    internal static Job Never(CancellationToken cancellationToken)
    {
        var cell = new DelayCell { _cancellationToken = cancellationToken };
        var job = new Job(new Job<VoidResult>(cell, cell.Version));
        if (cancellationToken.CanBeCanceled)
        {
            cell._registration = cancellationToken.UnsafeRegister(s_onCanceled, cell);
        }

        return job;
    }

    private bool Cancelable => _cancellationToken.CanBeCanceled;

    internal override string Describe() => "Job.Delay";

    /// <summary>The timer fired.</summary>
    internal override void Execute(PerThread state)
    {
        if (!Cancelable || Interlocked.Exchange(ref _claim, 1) == 0)
        {
            TrySetResult(default);
        }
    }

    private void OnCanceled()
    {
        if (Interlocked.Exchange(ref _claim, 1) == 0)
        {
            TimerQueue.Cancel(_entry);
            TrySetException(new OperationCanceledException(_cancellationToken));
        }
    }

    private protected override void Release()
    {
        if (Cancelable)
        {
            _registration.Unregister();
            InvalidateTokens();
            return;
        }

        ResetBox();
        BoxPool<DelayCell>.Shared.Return(this);
    }
}
