using System;
using Myriad.Coordination;
using Myriad.Internal;

namespace Myriad.Channels;

internal sealed partial class SelectOperation
{
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
                _cases[i]!.Unlink();
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

        SelectCase? winningCase = null;
        for (int i = 0; i < _caseCount; i++)
        {
            SelectCase c = _cases[i]!;
            _cases[i] = null;
            if (c.Index == winner)
            {
                winningCase = c;
            }
            else
            {
                c.Recycle();
            }
        }

        Action? plainHandler = winner < 0 ? null : winner == _defaultIndex ? _onDefault : winner == _timeoutIndex ? _onTimeout : null;
        _caseCount = 0;
        if (poolable)
        {
            ResetForPool();
        }
        else
        {
            // A timer or token callback may still run: it must find this object committed, as it is.
            InvalidateTokens();
        }

        // Last, so that a throwing handler leaves nothing behind.
        if (winningCase is not null)
        {
            if (succeeded)
            {
                winningCase.RecycleAndInvoke();
            }
            else
            {
                winningCase.Recycle();
            }
        }
        else if (succeeded)
        {
            plainHandler?.Invoke();
        }
    }

    private void ResetForPool()
    {
        _totalCount = 0;
        _defaultIndex = -1;
        _onDefault = null;
        _timeoutIndex = -1;
        _timeout = default;
        _onTimeout = null;
        _cancellationToken = default;
        _started = false;
        _enqueued = false;
        _committed = 0;
        _winner = -1;
        ResetBox();
        BoxPool<SelectOperation>.Return(this);
    }
}
