using System;
using System.Diagnostics;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Coordination;

/// <summary>
/// The timers of the system clock: one <see cref="TimerWheel"/> per shard, each under its own lock,
/// and one background thread that advances them all and hands what fell due to the runtimes.
/// </summary>
/// <remarks>
/// <para><b>Sharding.</b> A timer goes to the shard of the calling thread (by managed thread id), so
/// the workers of a runtime insert and cancel under different locks, as Go's per-P timer heaps do.
/// Each operation is O(1) under its shard's lock; a cancel takes the lock of the shard the entry
/// names.</para>
/// <para><b>Protocol</b> (the driver thread and the schedulers; <c>_plannedWake</c> is the time, in
/// wheel milliseconds, at which the driver will look at the shards again).
/// 1. Schedule: insert the entry under its shard's lock (stamping its deadline, runtime and shard),
///    start the driver on first use, then, if the deadline is before <c>_plannedWake</c>, unpark
///    the driver (a permit: a driver not yet asleep returns from its next park at once).
/// 2. The driver sets <c>_plannedWake</c> to "never" (with a full fence) before it visits the
///    shards: a scheduler that inserts after the driver's visit of its shard then sees a planned
///    wake later than its deadline and unparks it; one that inserted before is seen by the visit
///    (the shard lock orders the two).
/// 3. For each shard, under its lock: advance the wheel to now, copying out every due entry
///    (<see cref="TimerBatch"/>), and note the shard's next expiration. Outside the lock, dispatch
///    the batch: one queue operation per runtime, then the runtime's workers run what it resumes.
/// 4. Publish the earliest next expiration as <c>_plannedWake</c> (full fence), then park until it
///    (indefinitely when every wheel is empty). Any unpark since step 2 makes the park return at
///    once, and the driver starts over at step 2.
/// No wake-up is lost: an insert either happens before the driver's visit of its shard (the visit
/// sees it), or after it, and then its scheduler reads <c>_plannedWake</c> after the step-2 write
/// (its lock acquisition follows the driver's release of the same lock), so it unparks the driver
/// unless the driver already plans to wake before the new deadline.</para>
/// <para><b>Resolution.</b> Deadlines are whole milliseconds since the queue's origin, rounded up;
/// the driver sleeps in the operating system's timed waits (about a millisecond on Linux), so a timer
/// fires between its due time and about two milliseconds later on an idle machine.</para>
/// </remarks>
internal sealed class SystemTimerQueue : TimerQueue
{
    /// <summary>
    /// Shards: one per processor by default, so that each worker of a runtime sized to the machine
    /// usually inserts under a lock of its own. AppContext key: <c>Myriad.TimerShards</c> (1 to 1024).
    /// </summary>
    internal static readonly int ShardCount = MyriadDefaults.ReadInt("Myriad.TimerShards", Environment.ProcessorCount, 1, 1024);

    /// <summary>
    /// Stack size in bytes of the timer driver thread: it runs a short loop of its own (no user code),
    /// so 256 KiB is ample where the platform default would reserve 8 MiB.
    /// AppContext key: <c>Myriad.TimerThreadStackSize</c>.
    /// </summary>
    internal static readonly int ThreadStackSize = MyriadDefaults.ReadInt("Myriad.TimerThreadStackSize", 256 * 1024, 64 * 1024, 16 * 1024 * 1024);

    internal static readonly SystemTimerQueue Instance = new(ShardCount);

    private readonly TimerShard[] _shards;
    private readonly long _origin = Stopwatch.GetTimestamp();
    private readonly Parker _parker = new();
    private long _plannedWake = long.MaxValue;
    private int _started;

    internal SystemTimerQueue(int shards)
    {
        _shards = new TimerShard[shards];
        for (int i = 0; i < shards; i++)
        {
            _shards[i] = new TimerShard(0);
        }
    }

    internal override int Count
    {
        get
        {
            int count = 0;
            foreach (TimerShard shard in _shards)
            {
                count += shard.Count;
            }

            return count;
        }
    }

    /// <summary>Step 1.</summary>
    internal override void Schedule(ITimerNode entry, TimeSpan delay, JobRuntime? runtime)
    {
        // The thread first: if it cannot start (no memory, no descriptor for a new thread), the
        // caller gets the exception with nothing inserted, and the next schedule tries again.
        if (Volatile.Read(ref _started) != Running)
        {
            EnsureStarted();
        }

        long deadline = MillisecondsSince(_origin, Stopwatch.GetTimestamp(), Stopwatch.Frequency, roundUp: true) + DelayMilliseconds(delay);
        TimerShard shard = _shards[(uint)Environment.CurrentManagedThreadId % (uint)_shards.Length];
        deadline = shard.Insert(entry, deadline, runtime);

        if (deadline < Volatile.Read(ref _plannedWake))
        {
            _parker.Unpark();
        }
    }

    private long Now => MillisecondsSince(_origin, Stopwatch.GetTimestamp(), Stopwatch.Frequency, roundUp: false);

    /// <summary>
    /// Returns once the queue's thread runs, or throws why it could not start. <c>_started</c>:
    /// <see cref="NotStarted"/> -> <see cref="Starting"/> (one caller won the exchange and starts the
    /// thread) -> <see cref="Running"/> (once set, never unset), or back to <see cref="NotStarted"/>
    /// when the start threw. A caller that finds it <see cref="Starting"/> waits for the outcome
    /// and, after a failure, tries itself: no schedule inserts a timer before the thread runs, so
    /// none is left waiting for a start that failed on another thread.
    /// </summary>
    private void EnsureStarted()
    {
        SpinWait spin = default;
        while (true)
        {
            int started = Volatile.Read(ref _started);
            if (started == Running)
            {
                return;
            }

            if (started == NotStarted && Interlocked.CompareExchange(ref _started, Starting, NotStarted) == NotStarted)
            {
                try
                {
                    var thread = new Thread(static q => ((SystemTimerQueue)q!).Run(), ThreadStackSize)
                    {
                        IsBackground = true,
                        Name = "Myriad timer",
                    };
                    StartThread(thread, this);
                }
                catch
                {
                    // Not started: this caller gets the exception, and the next schedule (or one
                    // waiting here) tries again. Left set, the flag would keep every timer of the
                    // process pending for good after one failure (an accept loop backing off with
                    // Job.Delay while descriptors ran out).
                    Volatile.Write(ref _started, NotStarted);
                    throw;
                }

                Volatile.Write(ref _started, Running);
                return;
            }

            spin.SpinOnce();
        }
    }

    private const int NotStarted = 0;
    private const int Starting = 1;
    private const int Running = 2;

    /// <summary>Starts the queue's thread; a test replaces it to make the start fail.</summary>
    internal Action<Thread, SystemTimerQueue> StartThread { get; set; } = static (thread, queue) => thread.UnsafeStart(queue);

    private void Run()
    {
        var batch = new TimerBatch();
        while (true)
        {
            // Step 2.
            Interlocked.Exchange(ref _plannedWake, long.MaxValue);

            // Step 3.
            long now = Now;
            long next = long.MaxValue;
            foreach (TimerShard shard in _shards)
            {
                lock (shard.Gate)
                {
                    shard.Wheel.Advance(now, batch);
                    next = Math.Min(next, shard.Wheel.NextExpiration());
                }

                if (batch.Count > 0)
                {
                    batch.Dispatch();
                }
            }

            // Step 4.
            Interlocked.Exchange(ref _plannedWake, next);
            if (next == long.MaxValue)
            {
                _parker.Park();
                continue;
            }

            long wait = next - Now;
            if (wait > 0)
            {
                _parker.Park((int)Math.Min(wait, int.MaxValue));
            }
        }
    }
}
