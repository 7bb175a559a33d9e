using System;
using Myriad.Coordination;
using Myriad.Internal;

namespace Myriad.Channels;

internal sealed partial class SelectOperation
{
    /// <summary>Consuming the result runs the winning handler (see <see cref="Release"/>).</summary>
    internal override bool ConsumingRunsUserCode => true;

    /// <summary>
    /// Step 6 of the commit protocol, run by the consumer of the result (<c>GetResult</c> reads the
    /// outcome first, then calls this, then throws the outcome's exception if any).
    /// </summary>
    private protected override void Release()
    {
        int winner = _winner;
        bool succeeded = ErrorUnchecked is null;

        if (_enqueued)
        {
            for (int i = 0; i < _caseCount; i++)
            {
                _slots[i].Case!.Unlink();
            }
        }

        bool poolable = !_armed;
        if (_armed)
        {
            if (_timer is { } timer)
            {
                TimerQueue.Cancel(timer);
            }

            _registration.Unregister();
        }

        int winningSlot = -1;
        for (int i = 0; i < _caseCount; i++)
        {
            SelectCase c = _slots[i].Case!;
            if (c.Index == winner)
            {
                winningSlot = i;
            }
            else
            {
                c.Clear();
                KeepOrReturn(i, c, poolable);
            }
        }

        if (winningSlot >= 0)
        {
            // The case copies its handler and outcome, comes back through Recycle (which recycles
            // this operation too), and only then runs the handler: a handler that throws, or that
            // runs a select of its own on this thread, finds everything already recycled.
            _slots[winningSlot].Case!.RecycleThenInvoke(winningSlot, succeeded);
            return;
        }

        Action? handler = winner < 0 ? null : winner == _defaultIndex ? _onDefault : winner == _timeoutIndex ? _onTimeout : null;
        Recycle(poolable);
        if (succeeded)
        {
            handler?.Invoke();
        }
    }

    /// <summary>Called by the winning case once it has copied what its handler needs and cleared itself.</summary>
    internal void Recycle(SelectCase winner, int slot)
    {
        KeepOrReturn(slot, winner, !_armed);
        Recycle(!_armed);
    }

    private void KeepOrReturn(int slot, SelectCase c, bool poolable)
    {
        ref CaseSlot s = ref _slots[slot];
        s.Case = null;
        if (poolable && s.Spare is null)
        {
            s.Spare = c;
        }
        else
        {
            c.ReturnToPool();
        }
    }

    private void Recycle(bool poolable)
    {
        _caseCount = 0;
        ValueSink = null;
        if (!poolable)
        {
            // A timer or token callback may still run: it must find this object committed, as it is.
            InvalidateTokens();
            return;
        }

        _totalCount = 0;
        _defaultIndex = -1;
        _onDefault = null;
        _timeoutIndex = -1;
        _timeout = default;
        _onTimeout = null;
        _cancellationToken = default;
        _hasCancellation = false;
        _started = false;
        _enqueued = false;
        _committed = 0;
        _winner = -1;
        ResetBox();
        if (t_cached is null)
        {
            t_cached = this;
        }
        else
        {
            BoxPool<SelectOperation>.Shared.Return(this);
        }
    }
}
