using System;
using System.Diagnostics.Tracing;
using System.Threading;

namespace Myriad.Compare.Experiments;

/// <summary>
/// The garbage collector's pauses during a measured run, from the runtime's own GC events
/// (suspension begins, execution restarts), so that the sleepers' timer lateness can be read against
/// them: no timer fires while the runtime is suspended. Recording costs two events per collection.
/// </summary>
/// <remarks>
/// Events reach an in-process listener asynchronously, stamped with the time they were written, so the
/// pauses are computed from the stamps (events stamped before <see cref="Restart"/> are ignored) and
/// <see cref="Drain"/> waits briefly for the last ones. The
/// total comes from <see cref="GC.GetTotalPauseDuration"/>, which is exact; the listener gives the
/// longest pause. Under NativeAOT without event source support no event arrives, and only the total
/// and the count are reported.
/// </remarks>
internal sealed class GcPauses : EventListener
{
    private const int GcKeyword = 0x1;
    private const int SuspendEEBegin = 9;
    private const int RestartEEEnd = 3;

    /// <summary>How long <see cref="Drain"/> waits for events still on their way.</summary>
    private static readonly TimeSpan DrainWait = TimeSpan.FromMilliseconds(200);

    private readonly Lock _gate = new();
    private long _startedAt;
    private long _suspendedAt;
    private double _longestMs;
    private int _seen;

    private TimeSpan _pauseAtStart;
    private int _collectionsAtStart;

    /// <summary>Starts counting from now: the total pause time and collections so far are the baseline.</summary>
    public void Restart()
    {
        lock (_gate)
        {
            _startedAt = DateTime.UtcNow.Ticks; // events of earlier collections may still arrive after this
            _suspendedAt = 0;
            _longestMs = 0;
            _seen = 0;
        }

        _pauseAtStart = GC.GetTotalPauseDuration();
        _collectionsAtStart = GC.CollectionCount(0);
    }

    /// <summary>
    /// Waits for events still on their way, then adds gc_pauses, gc_pause_total_ms and (if any event
    /// arrived) gc_pause_max_ms to <paramref name="values"/>.
    /// </summary>
    public void Drain(System.Collections.Generic.Dictionary<string, double> values)
    {
        int collections = GC.CollectionCount(0) - _collectionsAtStart;
        double totalMs = (GC.GetTotalPauseDuration() - _pauseAtStart).TotalMilliseconds;
        Thread.Sleep(DrainWait);
        values["gc_pauses"] = collections;
        values["gc_pause_total_ms"] = totalMs;
        lock (_gate)
        {
            if (_seen > 0)
            {
                values["gc_pause_max_ms"] = _longestMs;
            }
        }
    }

    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        if (eventSource.Name == "Microsoft-Windows-DotNETRuntime")
        {
            EnableEvents(eventSource, EventLevel.Informational, (EventKeywords)GcKeyword);
        }
    }

    protected override void OnEventWritten(EventWrittenEventArgs eventData)
    {
        lock (_gate)
        {
            if (eventData.TimeStamp.Ticks < _startedAt)
            {
                return;
            }

            if (eventData.EventId == SuspendEEBegin)
            {
                _suspendedAt = eventData.TimeStamp.Ticks;
            }
            else if (eventData.EventId == RestartEEEnd && _suspendedAt != 0)
            {
                double ms = TimeSpan.FromTicks(eventData.TimeStamp.Ticks - _suspendedAt).TotalMilliseconds;
                _longestMs = Math.Max(_longestMs, ms);
                _seen++;
                _suspendedAt = 0;
            }
        }
    }
}
