using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Coordination;

/// <summary>
/// The process-wide timer service behind <see cref="Job.Delay(TimeSpan, CancellationToken)"/> and select
/// timeouts: a min-heap of deadlines (O(log n) per timer) served by one background thread that only
/// hands due work to the runtimes.
/// </summary>
/// <remarks>
/// <para><b>Where timer work runs.</b> An entry remembers the runtime it was scheduled from (the
/// calling thread's scheduler, if any). When it is due, the timer thread queues its work item on that
/// runtime (or on the .NET thread pool for timers started outside any runtime). The timer thread never
/// runs user code, so a slow continuation cannot delay other timers, and a job that awaits a delay
/// resumes on its own runtime (on the one thread of a single-threaded runtime).</para>
/// <para><b>Protocol</b> (everything below happens under <c>s_gate</c> except step 4).
/// 1. Schedule: stamp the deadline and a sequence number, add to the heap, start the thread on first
///    use, and pulse the thread if the new entry is now the earliest (it may be sleeping until a
///    later deadline).
/// 2. The thread sleeps (Monitor.Wait) until the earliest deadline, or indefinitely while the heap is
///    empty; any pulse makes it re-examine the heap.
/// 3. When the earliest entry is due, the thread removes every due entry from the heap, copying out
///    its work item and runtime (an entry that left the heap may be reused by its owner at once).
/// 4. Outside the lock, it queues each work item on its runtime, then pays at once any wake-up a
///    multi-threaded runtime deferred (this thread never runs the work itself, so a lazy wake would
///    only add the runtime's wake delay to every timer).
/// Cancel removes an entry under the lock: true means the entry left the heap before step 3 and will
/// never fire; false means it already fired (or was never scheduled).</para>
/// </remarks>
internal static class TimerQueue
{
    /// <summary>
    /// The longest delay accepted, as for <see cref="System.Threading.Tasks.Task.Delay(TimeSpan)"/>:
    /// 2^32 - 2 milliseconds (about 49.7 days), so that a deadline never overflows.
    /// </summary>
    internal static readonly TimeSpan MaxDelay = TimeSpan.FromMilliseconds(uint.MaxValue - 1.0);

    private static readonly object s_gate = new();
    private static readonly TimerHeap s_heap = new();
    private static long s_sequence;
    private static Thread? s_thread;

    /// <summary>Pending timers (diagnostics and tests).</summary>
    internal static int Count
    {
        get
        {
            lock (s_gate)
            {
                return s_heap.Count;
            }
        }
    }

    /// <summary>Step 1: <paramref name="entry"/>'s work item will run after <paramref name="delay"/> on <paramref name="runtime"/>.</summary>
    internal static void Schedule(TimerEntry entry, TimeSpan delay, JobRuntime? runtime)
    {
        Debug.Assert(delay >= TimeSpan.Zero && delay <= MaxDelay, "validated by the public entry points");
        long deadline = Stopwatch.GetTimestamp() + (long)(delay.Ticks * ((double)Stopwatch.Frequency / TimeSpan.TicksPerSecond));
        lock (s_gate)
        {
            entry.Deadline = deadline;
            entry.Sequence = ++s_sequence;
            entry.Runtime = runtime;
            s_heap.Add(entry);
            if (s_thread is null)
            {
                StartThread();
            }
            else if (ReferenceEquals(s_heap.First, entry))
            {
                Monitor.Pulse(s_gate);
            }
        }
    }

    /// <summary>Removes a pending timer; true if it will now never fire, false if it already fired.</summary>
    internal static bool Cancel(TimerEntry entry)
    {
        lock (s_gate)
        {
            return s_heap.Remove(entry);
        }
    }

    /// <summary>Validates a public delay argument (<see cref="Timeout.InfiniteTimeSpan"/> is the caller's business).</summary>
    internal static void ThrowIfInvalid(TimeSpan delay, string paramName)
    {
        if ((delay < TimeSpan.Zero && delay != Timeout.InfiniteTimeSpan) || delay > MaxDelay)
        {
            throw new ArgumentOutOfRangeException(paramName, delay, "The delay must be Timeout.InfiniteTimeSpan or between zero and about 49.7 days (2^32 - 2 milliseconds).");
        }
    }

    private static void StartThread()
    {
        var thread = new Thread(static () => Run())
        {
            IsBackground = true,
            Name = "Myriad timer",
        };
        thread.UnsafeStart();
        s_thread = thread;
    }

    private static void Run()
    {
        var due = new List<(WorkItem Target, JobRuntime? Runtime)>();
        while (true)
        {
            lock (s_gate)
            {
                // Steps 2 and 3.
                while (true)
                {
                    if (s_heap.Count == 0)
                    {
                        Monitor.Wait(s_gate);
                        continue;
                    }

                    long now = Stopwatch.GetTimestamp();
                    TimerEntry first = s_heap.First;
                    if (first.Deadline > now)
                    {
                        Monitor.Wait(s_gate, MillisecondsUntil(first.Deadline - now));
                        continue;
                    }

                    do
                    {
                        due.Add((first.Target, first.Runtime));
                        first.Runtime = null;
                        s_heap.Remove(first);
                    }
                    while (s_heap.Count > 0 && (first = s_heap.First).Deadline <= now);
                    break;
                }
            }

            // Step 4.
            foreach ((WorkItem target, JobRuntime? runtime) in due)
            {
                if (runtime is not null)
                {
                    runtime.Schedule(target);
                }
                else
                {
                    JobRuntime.ScheduleAfterDisposal(target); // the runtime-less path: the .NET thread pool
                }
            }

            due.Clear();
            MultiThreadRuntime.PayOwedWake();
        }
    }

    /// <summary>A sleep that ends at or just after the deadline (rounded up: waking early only loops).</summary>
    private static int MillisecondsUntil(long stopwatchTicks)
    {
        double ms = Math.Ceiling(stopwatchTicks * 1000.0 / Stopwatch.Frequency);
        return (int)Math.Clamp(ms, 1, int.MaxValue);
    }
}
