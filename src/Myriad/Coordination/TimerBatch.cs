using System;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Coordination;

/// <summary>
/// Timers that fired, copied out of the wheel under its lock, and handed to their runtimes outside
/// it in batches: one <see cref="JobRuntime.ScheduleBatch"/> call per run of consecutive timers of
/// one runtime (in practice one call per runtime per tick), so that a million timers due together
/// cost the firing thread one queue operation per batch, and the runtime's workers, not the firing
/// thread, run what they resume.
/// </summary>
/// <remarks>
/// An entry is copied out (its work item and runtime) and marked idle as it leaves the wheel:
/// from then on its owner may schedule it again at once, while the copy is still to be handed off.
/// Owned by one thread at a time (the driver that fills and dispatches it).
/// </remarks>
internal sealed class TimerBatch
{
    private WorkItem[] _items = new WorkItem[16];
    private JobRuntime?[] _runtimes = new JobRuntime?[16];
    private int _count;

    internal int Count => _count;

    /// <summary>Copies a fired entry out and marks it idle (under the owning shard's lock).</summary>
    internal void Add(ITimerNode entry)
    {
        if (_count == _items.Length)
        {
            Array.Resize(ref _items, _count * 2);
            Array.Resize(ref _runtimes, _count * 2);
        }

        _items[_count] = entry.Target;
        _runtimes[_count] = entry.TimerRuntime;
        _count++;
        entry.TimerRuntime = null;
        entry.Shard = null;
    }

    /// <summary>The work item at <paramref name="index"/> (tests).</summary>
    internal WorkItem ItemAt(int index) => _items[index];

    /// <summary>Puts the batch in an order drawn from <paramref name="random"/> (timers that fell due at one instant, under a virtual clock).</summary>
    internal void Shuffle(Random random)
    {
        for (int i = _count - 1; i > 0; i--)
        {
            int j = random.Next(i + 1);
            (_items[i], _items[j]) = (_items[j], _items[i]);
            (_runtimes[i], _runtimes[j]) = (_runtimes[j], _runtimes[i]);
        }
    }

    /// <summary>
    /// Queues every item on its runtime (the .NET thread pool for none), in batch order, and empties
    /// the batch. Never runs the items itself, so no continuation runs on the firing thread.
    /// </summary>
    internal void Dispatch()
    {
        int start = 0;
        while (start < _count)
        {
            JobRuntime? runtime = _runtimes[start];
            int end = start + 1;
            while (end < _count && ReferenceEquals(_runtimes[end], runtime))
            {
                end++;
            }

            if (runtime is not null)
            {
                runtime.ScheduleBatch(_items.AsSpan(start, end - start));
            }
            else
            {
                for (int i = start; i < end; i++)
                {
                    JobRuntime.ScheduleAfterDisposal(_items[i]); // the runtime-less path: the .NET thread pool
                }
            }

            start = end;
        }

        Clear();
        MultiThreadRuntime.PayOwedWake();
    }

    /// <summary>Empties the batch without dispatching (tests), dropping its references.</summary>
    internal void Clear()
    {
        Array.Clear(_items, 0, _count);
        Array.Clear(_runtimes, 0, _count);
        _count = 0;
    }
}
