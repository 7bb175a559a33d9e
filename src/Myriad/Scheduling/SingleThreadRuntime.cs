using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>
/// Common machinery of the runtimes that run every job on one thread: the thread that is inside
/// <see cref="JobRuntime.Run{TResult}(Func{Job{TResult}}, CancellationToken)"/> (or <c>Wait()</c> on
/// one of their jobs) drives them. Nothing runs while nobody drives: spawned jobs wait in the queue.
/// </summary>
/// <remarks>
/// <para>Like Tokio's current-thread runtime: any thread may spawn (the queue is guarded by a lock),
/// and one thread at a time drives (a <c>Run</c> or <c>Wait</c> on a second thread waits its turn, or
/// sees its job run by the current driver; <see cref="RunUntilIdle"/> there throws). A job resumed by
/// another thread's completion runs there, inline,
/// like any job; a job that awaited a Task on the driver thread is posted back to the queue.</para>
/// <para><b>Disposal cancels.</b> Queued jobs that never started complete as canceled when the runtime
/// is disposed (their awaiters see <see cref="OperationCanceledException"/>); continuations queued
/// after disposal run on the .NET thread pool.</para>
/// </remarks>
public abstract class SingleThreadRuntime : JobRuntime
{
    private readonly Lock _lock = new();
    private readonly WorkQueue _queue = new();
    private readonly Driver _driver;
    private int _driving;

    /// <summary>
    /// Wake-ups of others queued since the last drive ended (<see cref="WorkItem.WakesOutside"/>); some
    /// may have run since. Under <see cref="_lock"/>. Zero lets a drive end without looking at the queue.
    /// </summary>
    private int _outsideWakeUps;

    /// <summary>The thread inside a drive, or null; written by that thread only, read by waiters.</summary>
    private volatile Thread? _driverThread;

    private protected SingleThreadRuntime(string? name, TimeSpan idleSpin)
        : base(name)
    {
        _driver = new Driver(this, idleSpin);
        RegisterMetrics();
    }

    /// <inheritdoc/>
    public override Diagnostics.SchedulerStats Stats() => new(PendingCount, 0, 0, 0, 0);

    /// <inheritdoc/>
    public override int WorkerCount => 1;

    /// <summary>Jobs and continuations waiting to run.</summary>
    public int PendingCount
    {
        get
        {
            lock (_lock)
            {
                return _queue.Count;
            }
        }
    }

    /// <summary>
    /// A thread that waits for a spawned job it just queued is about to run it itself (see
    /// <see cref="JobRuntime.EnterInlineRun"/>): take its queue entry back if it is the newest one,
    /// so that a loop of <c>Run</c> calls does not grow the queue by one stale entry per call (the
    /// entries would also count as pending work and be walked by the next drive).
    /// </summary>
    internal override SchedulerContext? EnterInlineRun(WorkItem item, PerThread state)
    {
        TakeBackIfNewest(item);
        return state.Context;
    }

    /// <summary>
    /// Removes <paramref name="item"/>'s queue entry if it is the newest one: for a spawn that a
    /// waiting thread or an awaiting job (join helping, <c>SpawnBox.TryHelp</c>) claimed and runs
    /// itself. A job that spawns a child and awaits it at once, in a loop, would otherwise leave one
    /// stale entry per child, and the queue would grow until the job suspends.
    /// </summary>
    internal void TakeBackIfNewest(WorkItem item)
    {
        lock (_lock)
        {
            if (_queue.Count > 0 && ReferenceEquals(_queue.PeekLast(), item))
            {
                _queue.RemoveLast();
            }
        }
    }

    /// <summary>Queues <paramref name="item"/>, counting a wake-up of someone outside (see <see cref="RunWakeUpsOfOthers"/>). Under the queue's lock.</summary>
    private void Enqueue(WorkItem item)
    {
        _queue.Enqueue(item);
        if (item.WakesOutside(this))
        {
            _outsideWakeUps++;
        }
    }

    /// <summary>Chooses which queued item runs next; called under the queue's lock with a non-empty queue.</summary>
    private protected abstract WorkItem Dequeue(WorkQueue queue);

    internal override void Schedule(WorkItem item)
    {
        lock (_lock)
        {
            if (!IsDisposed)
            {
                Enqueue(item);
                item = null!;
            }
        }

        if (item is not null)
        {
            item.Abandon(); // disposed: a job ends canceled, anything else runs on the thread pool
            return;
        }

        _driver.Wake();
    }

    /// <summary>
    /// Runs queued jobs on the calling thread until none is left, and returns how many items ran.
    /// Jobs suspended on something outside the runtime are not waited for.
    /// </summary>
    /// <exception cref="InvalidOperationException">Another thread is driving the runtime.</exception>
    public int RunUntilIdle()
    {
        int ran = 0;
        Drive(() => false, ref ran);
        return ran;
    }

    /// <summary>
    /// Drives the runtime on the calling thread until <paramref name="cell"/> completes; or returns
    /// false, having done nothing, when another thread is driving (the caller tries again until it
    /// drives or the job completes, see BlockingWaiter).
    /// </summary>
    internal bool TryDriveUntilComplete(JobCell cell, short token, BlockingWaiter waiter)
    {
        int ran = 0;
        return Drive(() => waiter.IsDone, ref ran, cell, token, waiter, throwIfDriven: false);
    }

    /// <summary>
    /// For a blocking wait that the BCL hands to this runtime's TaskScheduler (a <c>Task.Wait</c> on a
    /// task of it, or on <see cref="Job{T}.AsTask"/> of one of its jobs): drives the runtime until
    /// <paramref name="task"/> completed, parking while idle (a <see cref="Schedule(WorkItem)"/> wakes
    /// it). While another thread drives, that one makes the progress: poll, and take the drive over
    /// if it stops. Throws when this thread drives in an outer frame, since nothing could ever make
    /// progress then.
    /// </summary>
    internal void DriveUntilCompleted(System.Threading.Tasks.Task task)
    {
        // The task may run off this drive: on another thread that drives the runtime, or on the
        // thread pool once a disposal (even one that starts after this check) abandoned the
        // runtime's queued items there. An idle drive parks until something is queued, so such a
        // completion must wake it, or the wait would never return.
        task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_driver.Wake);
        while (!task.IsCompleted)
        {
            int ran = 0;
            if (!Drive(() => task.IsCompleted, ref ran, waiter: new BlockingWaiter(), throwIfDriven: false))
            {
                Thread.Sleep(MyriadDefaults.HelpLoopParkMilliseconds);
            }
        }
    }

    private bool Drive(Func<bool> done, ref int ran, JobCell? cell = null, short token = 0, BlockingWaiter? waiter = null, bool throwIfDriven = true)
    {
        if (Interlocked.CompareExchange(ref _driving, 1, 0) != 0)
        {
            if (_driverThread == Thread.CurrentThread)
            {
                // An outer frame of this very thread drives (a job of this runtime that entered
                // another runtime and now waits for this one): nobody else can take the drive over,
                // so waiting would wait on itself.
                throw new InvalidOperationException(cell is null && throwIfDriven
                    ? $"RunUntilIdle was called on a thread that already drives this {GetType().Name} in an outer frame (from one of its own jobs, or code such a job called): a drive cannot nest. Await the work instead."
                    : $"This thread already drives this {GetType().Name} in an outer frame and cannot wait for one of its jobs here: that job could only run after the outer frame returns.");
            }

            if (!throwIfDriven)
            {
                return false;
            }

            throw new InvalidOperationException($"Another thread is already driving this {GetType().Name}; a single-threaded runtime runs on one thread at a time.");
        }

        _driverThread = Thread.CurrentThread;
        SchedulerContext? previous = SchedulerContext.Enter(_driver);

        // The driving thread's own SynchronizationContext (a UI thread's) must not be what the jobs
        // see: a Task await inside a job would capture it and post its resume there, to a thread
        // that is blocked right here driving. Items run with none (each one is reset after it runs)
        // and the thread gets its context back when the drive ends.
        SynchronizationContext? callerSync = ExecutionContextHelper.HideSynchronizationContext();
        OnDriveStarted();

        try
        {
            // A drive inside a task of a non-default TaskScheduler (a task of this runtime's scheduler
            // that waits for one of its jobs) runs the jobs inside a task of the default one, the
            // waited-for job's inline start included: the order of jobs, a seed's schedule, is the
            // same as on any other thread.
            bool hideScheduler = ExecutionContextHelper.InNonDefaultTaskScheduler;
            if (cell is not null)
            {
                waiter!.BindContext(_driver);
                if (cell.HasAwaiter)
                {
                    cell.ThrowRegistrationRefused(token); // awaited already: see JobCell.HasAwaiter
                }

                if (!hideScheduler)
                {
                    cell.TryRunInline(PerThread.Current);
                }
                else
                {
                    ExecutionContextHelper.TryRunInlineOutsideTaskScheduler(cell);
                }

                cell.OnCompleted(waiter!, token);
            }

            while (!done())
            {
                if (hideScheduler ? ExecutionContextHelper.TryRunOneOutsideTaskScheduler(_driver) : _driver.TryRunOne())
                {
                    ran++;
                    continue;
                }

                if (AdvanceIdleClock())
                {
                    continue;
                }

                if (waiter is null)
                {
                    return true;
                }

                ThrowIfDeadlocked(waiter, cell);

                _driver.Park(waiter);
            }

            RunWakeUpsOfOthers();
        }
        finally
        {
            OnDriveEnded();
            SynchronizationContext.SetSynchronizationContext(callerSync);
            SchedulerContext.Leave(previous);
            _driverThread = null;
            Volatile.Write(ref _driving, 0);
        }

        return true;
    }

    /// <summary>
    /// The drive's own job is done, and it returns: first it runs every queued wake-up of someone
    /// outside the runtime (<see cref="WorkItem.WakesOutside"/>), in queue order, and leaves the rest
    /// (its jobs, its spawns, its timers) for the next drive.
    /// </summary>
    /// <remarks>
    /// <para>Such items are wake-ups that this runtime's jobs made: a completion run on the driving
    /// thread is queued here when the trampoline is at its depth limit, and on a deterministic
    /// runtime always (so that the seed orders it). Left queued, a thread blocked on a promise that a
    /// job of the run completed, or a job of another runtime waiting on a <c>WaitGroup</c> the run
    /// released, waited for this runtime's next drive, and the disposal of the runtime then canceled
    /// that other runtime's job.</para>
    /// <para>They run none of this runtime's code, and what they wake on it is queued, not run: the
    /// trampoline's depth is at its limit while they run. Otherwise a hand-off that resumed one of
    /// its jobs inline would run it after the drive's job was done, and two jobs passing control
    /// through delays kept a drive from ever returning. The order is the queue's, so a deterministic
    /// runtime stays deterministic. A drive with none of them queued does not look at the queue.</para>
    /// </remarks>
    private void RunWakeUpsOfOthers()
    {
        lock (_lock)
        {
            if (_outsideWakeUps == 0)
            {
                return;
            }
        }

        PerThread state = PerThread.Current;
        int from = 0; // the items before it are not wake-ups of others (a queued job stays a queued job)
        while (true)
        {
            WorkItem? item = null;
            lock (_lock)
            {
                for (; from < _queue.Count; from++)
                {
                    if (_queue.PeekAt(from).WakesOutside(this))
                    {
                        item = _queue.RemoveAt(from);
                        break;
                    }
                }

                if (item is null)
                {
                    _outsideWakeUps = 0; // the whole queue was looked at; later ones count anew
                    return;
                }
            }

            Trampoline.RunFromScheduler(state, item, depth: MyriadDefaults.MaxInlineDepth); // what it wakes is deferred to the queue
        }
    }

    /// <summary>
    /// Called by the driving thread when nothing is runnable: a runtime with a virtual clock moves it
    /// to the next timer and queues the timers due then (true), so that the drive goes on.
    /// </summary>
    private protected virtual bool AdvanceIdleClock() => false;

    /// <summary>The driver ran one queued item (a step); on the driving thread.</summary>
    private protected virtual void AfterStep()
    {
    }

    /// <summary>Called on the driving thread as a drive starts (a deterministic runtime installs its seeded state).</summary>
    private protected virtual void OnDriveStarted()
    {
    }

    /// <summary>Called on the driving thread as a drive ends, on every path.</summary>
    private protected virtual void OnDriveEnded()
    {
    }

    /// <summary>
    /// Called by the driving thread of a <c>Run</c> or <c>Wait</c> when nothing is runnable and no
    /// timer of a virtual clock is pending, before it parks: a runtime that can prove that nothing
    /// will ever wake it throws <see cref="DeadlockException"/> instead of parking forever. The
    /// default parks (a runtime whose jobs may be woken by other threads cannot tell).
    /// <paramref name="waitedOn"/> is the cell the wait is for, when the caller knows it.
    /// </summary>
    private protected virtual void ThrowIfDeadlocked(BlockingWaiter waiter, JobCell? waitedOn = null)
    {
    }

    private protected override void DisposeCore()
    {
        // From here on Schedule abandons every resume: hand-offs (channel items, locks) must skip
        // this runtime's waiting jobs rather than wake them into cancellation (see JobCell.ConsumerCannotRun).
        RuntimeRegistry.RefuseResumes(this);
        WorkQueue abandoned = new();
        lock (_lock)
        {
            while (_queue.TryDequeue(out WorkItem? item))
            {
                abandoned.Enqueue(item);
            }
        }

        // Nothing drives a disposed single-threaded runtime again: jobs that never started, and jobs
        // whose wake-up was queued, end canceled (a job never runs off its runtime); anything else
        // (a Task of its TaskScheduler, Myriad's own items) runs on the thread pool, so that whoever
        // waits on it is not stranded.
        while (abandoned.TryDequeue(out WorkItem? item))
        {
            item.Abandon();
        }

        _driver.Wake();
        CompleteDisposal();
    }

    private sealed class Driver(SingleThreadRuntime runtime, TimeSpan idleSpin) : SchedulerContext(runtime)
    {
        private readonly Parker _parker = new(idleSpin);

        internal override JobRuntime Runtime => runtime;

        internal override void DeferLocal(WorkItem item)
        {
            lock (runtime._lock)
            {
                runtime.Enqueue(item);
            }
        }

        internal override bool TryRunOne()
        {
            WorkItem item;
            lock (runtime._lock)
            {
                if (runtime._queue.Count == 0)
                {
                    return false;
                }

                item = runtime.Dequeue(runtime._queue);
            }

            PerThread state = PerThread.Current;
            state.InlineBudget = MyriadDefaults.InlineBudget; // this item's (see SchedulerContext.BoundsInlineRuns)
            Trampoline.RunFromScheduler(state, item);
            runtime.AfterStep();
            return true;
        }

        /// <summary>
        /// A job of this runtime waits synchronously (<c>Wait()</c> inside a job) and nothing is
        /// queued: the waiter's loop on the driving thread. As <see cref="Drive"/> does when idle, a
        /// virtual clock first moves to its next timer (the loop then runs what fell due), and a
        /// runtime that can tell reports a deadlock, instead of parking until a wake that a virtual
        /// timer would never send.
        /// </summary>
        internal override void IdleUntilWoken(BlockingWaiter waiter)
        {
            if (waiter.IsDone || runtime.AdvanceIdleClock())
            {
                return;
            }

            runtime.ThrowIfDeadlocked(waiter);
            Park(waiter);
        }

        /// <summary>Parks the driving thread until something is queued or <paramref name="waiter"/> is done.</summary>
        internal void Park(BlockingWaiter waiter)
        {
            if (!waiter.IsDone)
            {
                _parker.Park();
            }
        }

        internal override void Wake() => _parker.Unpark();
    }
}

/// <summary>
/// Runs every job on the one thread that drives it, in FIFO order: for UI-like code, for code that
/// must not run concurrently, and for tests. See <see cref="SingleThreadRuntime"/>.
/// </summary>
public sealed partial class CurrentThreadRuntime : SingleThreadRuntime
{
    /// <summary>Creates a runtime; <paramref name="name"/> tags its metrics.</summary>
    public CurrentThreadRuntime(string? name = null)
        : this(name, RuntimeOptions.DefaultIdleSpin)
    {
    }

    private CurrentThreadRuntime(string? name, TimeSpan idleSpin)
        : base(name, idleSpin)
    {
    }

    private protected override WorkItem Dequeue(WorkQueue queue)
    {
        queue.TryDequeue(out WorkItem? item);
        return item!;
    }
}

/// <summary>
/// A single-threaded runtime that picks the next job pseudo-randomly from a seed: the same seed
/// replays the same interleaving, and different seeds explore different ones (use it in tests to
/// shake out ordering assumptions, as Go's race mode randomizes <c>runnext</c>).
/// </summary>
public sealed partial class DeterministicRuntime : SingleThreadRuntime
{
    private readonly Random _random;

    /// <summary>Creates a runtime whose schedule is a function of <paramref name="seed"/>.</summary>
    public DeterministicRuntime(int seed, string? name = null)
        : base(name, TimeSpan.Zero) // its driver waits only for real threads; spinning would buy nothing
    {
        Seed = seed;
        _random = new Random(ScheduleState(seed));
    }

    /// <summary>
    /// The <see cref="Random"/> seed of the schedule for <paramref name="seed"/>: the seed itself
    /// from 0 up (so recorded schedules and replay lines stay valid), a hash of it below 0.
    /// <see cref="Random(int)"/> takes the absolute value of its seed, which gave <c>s</c> and
    /// <c>-s</c> the same schedule (and <see cref="int.MinValue"/> that of <see cref="int.MaxValue"/>).
    /// </summary>
    internal static int ScheduleState(int seed)
    {
        if (seed >= 0)
        {
            return seed;
        }

        // The select generator's seed mix (splitmix64's finalizer: every bit of the seed reaches every
        // bit of the result); its top 31 bits, below the low bit it forces to 1.
        return (int)(Channels.SelectRandom.StateFromSeed(seed) >> 33);
    }

    /// <summary>The seed this runtime's schedule derives from.</summary>
    public int Seed { get; }

    private protected override WorkItem Dequeue(WorkQueue queue) => queue.RemoveAt(NextIndex(queue));
}
