using System;
using System.Diagnostics.CodeAnalysis;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

/// <summary>
/// The multi-threaded runtime's global queue: work spawned from outside the workers, and the
/// overflow of full worker queues. A FIFO under a lock, as Tokio's inject queue: it is off the hot
/// path of worker-to-worker work, and a lock makes "take back the item I just queued" possible.
/// The lock is a <see cref="TinyLock"/>: every section is a few pointer moves and never runs user
/// code, and a plain thread's spawn-and-wait takes it twice per job, where a <see cref="Lock"/>'s
/// owner-thread bookkeeping cost about a fifth of the whole round trip.
/// </summary>
/// <remarks>
/// <see cref="IsEmpty"/> is read without the lock (a volatile count, written under the lock), so
/// idle checks and the fair-interval probe cost no lock when there is nothing to take.
/// <see cref="TryTakeBackLast"/> lets a plain thread that spawned a job and now waits for it run it
/// itself without leaving a stale entry behind (the tiny-tasks experiment: spawn-and-wait from a plain thread).
/// </remarks>
internal sealed class InjectionQueue
{
    private readonly WorkQueue _items = new();
    private TinyLock _lock;
    private volatile int _count;

    internal bool IsEmpty => _count == 0;

    internal int Count => _count;

    /// <summary>Items that ever left the queue (dequeued or taken back); written under the lock, read racily.</summary>
    internal long Removals => Volatile.Read(ref _removals);

    private long _removals;

    internal void Enqueue(WorkItem item)
    {
        using (_lock.EnterScope())
        {
            _items.Enqueue(item);
            _count = _items.Count;
        }
    }

    internal void EnqueueBatch(WorkItem[] batch)
    {
        using (_lock.EnterScope())
        {
            foreach (WorkItem item in batch)
            {
                _items.Enqueue(item);
            }

            _count = _items.Count;
        }
    }

    /// <inheritdoc cref="EnqueueBatch(WorkItem[])"/>
    internal void EnqueueBatch(ReadOnlySpan<WorkItem> batch)
    {
        using (_lock.EnterScope())
        {
            foreach (WorkItem item in batch)
            {
                _items.Enqueue(item);
            }

            _count = _items.Count;
        }
    }

    internal bool TryDequeue([NotNullWhen(true)] out WorkItem? item)
    {
        if (_count == 0)
        {
            item = null;
            return false;
        }

        using (_lock.EnterScope())
        {
            bool found = _items.TryDequeue(out item);
            _count = _items.Count;
            if (found)
            {
                _removals++;
            }

            return found;
        }
    }

    /// <summary>
    /// Takes one item to run and moves up to <paramref name="extra"/> more into
    /// <paramref name="destination"/> (the caller's own queue, which must have room for them), all
    /// under one acquisition of the lock. A worker draining a large injection one item per lock
    /// would contend with every spawner overflowing into it; Go's <c>globrunqget</c> takes a batch
    /// for the same reason.
    /// </summary>
    internal bool TryDequeueBatch(LocalQueueOwner destination, int extra, [NotNullWhen(true)] out WorkItem? item)
    {
        if (_count == 0)
        {
            item = null;
            return false;
        }

        using (_lock.EnterScope())
        {
            if (!_items.TryDequeue(out item))
            {
                return false;
            }

            _removals++;
            for (int i = 0; i < extra && _items.TryDequeue(out WorkItem? next); i++)
            {
                destination.Push(next, static _ => throw new InvalidOperationException("a batch from the injection queue overflowed its destination"));
                _removals++;
            }

            _count = _items.Count;
            return true;
        }
    }

    /// <summary>
    /// Removes <paramref name="item"/> wherever it is; false if it is not queued (somebody took it).
    /// A scan under the lock: only for the rare path of a resume that raced a disposal's end
    /// (<see cref="MultiThreadRuntime.TryScheduleUnlessDrained"/>), where a later enqueue may have put
    /// other items behind it.
    /// </summary>
    internal bool TryRemove(WorkItem item)
    {
        using (_lock.EnterScope())
        {
            for (int i = 0; i < _items.Count; i++)
            {
                if (ReferenceEquals(_items.PeekAt(i), item))
                {
                    _items.RemoveAt(i);
                    _count = _items.Count;
                    _removals++;
                    return true;
                }
            }

            return false;
        }
    }

    /// <summary>Removes <paramref name="item"/> if it is the most recently queued item.</summary>
    internal bool TryTakeBackLast(WorkItem item)
    {
        if (_count == 0)
        {
            return false;
        }

        using (_lock.EnterScope())
        {
            if (_items.Count == 0 || !ReferenceEquals(_items.PeekLast(), item))
            {
                return false;
            }

            _items.RemoveLast();
            _count = _items.Count;
            _removals++;
            return true;
        }
    }
}
