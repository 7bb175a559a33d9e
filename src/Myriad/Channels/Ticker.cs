using System;
using System.Threading;
using Myriad.Coordination;

namespace Myriad.Channels;

/// <summary>
/// Delivers the time on <see cref="Channel"/> every period, until stopped: Go's <c>time.Ticker</c>.
/// Create one with <see cref="Chan.Ticker(TimeSpan)"/>.
/// </summary>
/// <remarks>The channel holds one tick: if the receiver is slow, ticks are dropped rather than queued,
/// as in Go. A tick delivered late (its runtime was busy) is followed by the next point of the
/// period's cadence, not by another tick at once. Stopping does not close the channel (as in Go), so
/// a receive waiting on it keeps waiting; select on it together with something that ends the loop.
/// Ticks are timed on the clock of the runtime the ticker was created on (the system clock outside
/// any runtime) and sent from that runtime (the .NET thread pool outside any runtime). A ticker that
/// is not stopped keeps ticking, and stays referenced by its clock's timer queue, even when nobody
/// holds it any more.</remarks>
public sealed class Ticker : IDisposable
{
    private readonly Chan<DateTimeOffset> _channel = Chan.Bounded<DateTimeOffset>(1);
    private readonly TimeSender _sender;

    internal Ticker(TimeSpan period)
    {
        // One check and one message: the delay check's message offers infinite and zero, which a
        // ticker refuses.
        if (period <= TimeSpan.Zero || period > TimerQueue.MaxDelay)
        {
            throw new ArgumentOutOfRangeException(nameof(period), period, "A ticker's period must be positive and at most about 49.7 days (2^32 - 2 milliseconds).");
        }

        Period = period;
        _sender = new TimeSender(_channel, period);
        _sender.Start(period);
    }

    /// <summary>The time between ticks.</summary>
    public TimeSpan Period { get; }

    /// <summary>The channel the ticks arrive on.</summary>
    public ReceiveOnlyChan<DateTimeOffset> Channel => _channel;

    /// <summary>Stops the ticks: no tick is scheduled any more (one being delivered on another thread at
    /// that very moment may still arrive). A tick already in the channel stays there. Idempotent.</summary>
    public void Stop() => _sender.Stop();

    /// <summary>Same as <see cref="Stop"/>.</summary>
    public void Dispose() => Stop();
}
