using System;
using System.Diagnostics;
using System.Threading;

namespace Myriad.Tests.Support;

/// <summary>
/// The system clock read in tenths of a second (a legal <see cref="TimeProvider"/> whose timestamp
/// cannot express a millisecond), counting the callbacks of the timers it creates.
/// </summary>
internal sealed class CoarseTimeProvider : TimeProvider
{
    private int _callbacks;

    public int Callbacks => Volatile.Read(ref _callbacks);

    public override long TimestampFrequency => 10;

    public override long GetTimestamp() => Stopwatch.GetTimestamp() / (Stopwatch.Frequency / 10);

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period) =>
        base.CreateTimer(
            s =>
            {
                Interlocked.Increment(ref _callbacks);
                callback(s);
            },
            state,
            dueTime,
            period);
}
