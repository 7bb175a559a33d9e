using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>
/// One thread of a <see cref="MultiThreadRuntime"/>: its run queue, its next-job slot, and its loop.
/// </summary>
/// <remarks>
/// <para><b>Next-job slot</b> (<c>_next</c>). Work deferred by the trampoline on this worker (a
/// continuation that would have run inline if the stack were shallower) goes here, so it runs right
/// after the current item unwinds: message-passing locality, as with Go's <c>runnext</c> and Tokio's
/// LIFO slot. A new item displaces the old one into the run queue. The slot is only ever swapped
/// atomically, so other workers can steal from it: a job parked in the slot of a worker stuck in a
/// long item is not stranded (Tokio's lesson). The owner uses it at most
/// <see cref="RuntimeOptions.NextSlotBudget"/> times in a row.</para>
/// <para><b>Loop.</b> Each tick: the woken queue (timer wake-ups) when it holds anything; every
/// <see cref="RuntimeOptions.GlobalQueueInterval"/> ticks the global queue first; then the next-job slot (within budget), the run queue, the global queue; then
/// search (steal half from a victim, starting at a rotating index) for a bounded number of rounds;
/// then park (see <see cref="MultiThreadRuntime.IdleCoordinator"/>).</para>
/// </remarks>
internal sealed partial class Worker : SchedulerContext
{
    private readonly MultiThreadRuntime _runtime;
    private readonly LocalQueue _queue;
    private readonly Thread _thread;
    private WorkItem? _next;
    private int _nextUses;

    // Scheduler ticks (items taken by NextLocal) until the next look at the global queue and the
    // next poll of the I/O driver: countdowns, not a tick counter taken modulo the intervals, which
    // cost two integer divisions per item. The intervals come from the runtime's options, a
    // snapshot that never changes.
    private int _globalCountdown;
    private int _ioCountdown;

    internal Worker(MultiThreadRuntime runtime, int index)
        : base(runtime)
    {
        _runtime = runtime;
        Index = index;
        _queue = new LocalQueue(runtime.Options.LocalQueueCapacity);
        Parker = new Parker(runtime.Options.IdleSpin);
        _thread = new Thread(static w => ((Worker)w!).RunLoop(), runtime.Options.ThreadStackSize)
        {
            IsBackground = true,
            Name = $"{runtime.Options.ThreadNamePrefix} {index}",
        };
    }

    internal int Index { get; }

    internal Parker Parker { get; }

    /// <summary>Written by the idle coordinator (under its lock or by this worker); read by this worker.</summary>
    internal volatile bool IsSearching;

    internal override JobRuntime Runtime => _runtime;

    internal LocalQueueStealer Stealer => _queue.Stealer;

    /// <summary>Items in this worker's queue and slot (racy estimate).</summary>
    internal int QueuedCount => _queue.Count + (Volatile.Read(ref _next) is null ? 0 : 1);

    /// <summary>The run queue's length alone (owner thread: exact at the moment of the read, as only thieves shrink it meanwhile).</summary>
    internal int RunQueueCount => _queue.Count;

    /// <summary>Successful steals by this worker; written by it alone, read racily by metrics.</summary>
    internal long StealCount;

    /// <summary>Times this worker parked; written by it alone, read racily by metrics.</summary>
    internal long ParkCount;

    /// <summary>
    /// Items this worker ran from its loop; written by it alone, read racily by the wake watchdog to
    /// judge whether this worker's queue and slot move. A job it runs inline (join helping) is not
    /// counted here: helping runs only the child it claimed, so older work queued behind a worker
    /// that keeps helping waits as behind a long item.
    /// </summary>
    internal long ItemsRun;

    /// <summary>
    /// Jobs this worker ran, from its loop or inline by join helping; written by it alone, read
    /// racily by the wake watchdog and spare threads to tell a busy worker from a blocked one.
    /// </summary>
    internal long JobsRun;

    /// <summary>Counts an item run from this worker's loop (owner thread only).</summary>
    private void CountItemRun()
    {
        Volatile.Write(ref ItemsRun, ItemsRun + 1);
        Volatile.Write(ref JobsRun, JobsRun + 1);
    }

    /// <summary>Counts a job this worker ran inline by join helping (owner thread only).</summary>
    internal void CountHelpedJob() => Volatile.Write(ref JobsRun, JobsRun + 1);

    internal bool HasStealableWork => _queue.Count > 0 || Volatile.Read(ref _next) is not null;

    internal void Start() => _thread.UnsafeStart(this);

    internal void Join() => _thread.Join();

    /// <summary>
    /// Whether the caller runs on this worker's thread, whatever scheduler context it is in now (a
    /// worker waiting for a single-threaded runtime's job drives that runtime under its context).
    /// </summary>
    internal bool IsCurrentThread => ReferenceEquals(_thread, Thread.CurrentThread);

    internal void Unpark()
    {
        Parker.Unpark();
        WakeIoPoller();
    }

    /// <summary>
    /// A spawn that an awaiting job on this worker claimed and runs inline (join helping) removes
    /// its entry: takes it back when it is the newest, else clears it among the newest entries, so
    /// that spawning children and awaiting them in order leaves no stale entries to fill the ring,
    /// overflow to the global queue and be stolen for nothing (owner thread only; see
    /// <see cref="LocalQueue"/>). The caller owns the item by its claim: an entry a thief copied
    /// already is a stale entry, which finds the claim taken.
    /// </summary>
    // AggressiveOptimization here and below: optimized from the first call, so that one-shot
    // programs do not run the spawn path as tier-0 code (docs/design.md, "Cold runs").
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal void RemoveEntryOfClaimed(WorkItem item)
    {
        LocalQueueOwner queue = _queue.Owner;
        if (!queue.TryTakeBackLastAndTrim(item))
        {
            queue.Forget(item, MyriadDefaults.ForgetScanDepth);
        }
    }

    /// <summary>Queues spawned work at the back of this worker's queue (owner thread only).</summary>
    internal void PushLocal(WorkItem item) => _queue.Owner.Push(item, _runtime.Overflow);

    /// <summary>
    /// Trampoline deferrals go to the next-job slot (owner thread only). No other worker is woken
    /// for it at once: the deferred item is this worker's own continuation and usually runs as soon
    /// as the current item unwinds. Waking a sibling would only let it steal the slot and drag a
    /// continuation chain from core to core (a million-job chain would then pay a migration every
    /// few dozen links). But the current item may go on for long after deferring (a job that
    /// completes a promise deep in a call chain, then computes), so the wake is deferred to the
    /// watchdog, as for a lone spawn: if the slot is still full and nothing moved for a whole
    /// lazy-wake delay, a parked sibling is woken and steals it. An item displaced into the run
    /// queue is older work, and that one is offered to idle workers now.
    /// </summary>
    internal override void DeferLocal(WorkItem item)
    {
        WorkItem? displaced = Interlocked.Exchange(ref _next, item);
        if (displaced is not null)
        {
            _queue.Owner.Push(displaced, _runtime.Overflow);
            _runtime.Idle.NotifyWork();
        }
        else
        {
            _runtime.OfferLater();
        }
    }

    internal override bool TryRunOne()
    {
        WorkItem? item = NextLocal() ?? Search();
        if (item is null)
        {
            return false;
        }

        CountItemRun();
        Trampoline.RunFromScheduler(item);
        return true;
    }

    internal override void IdleUntilWoken(BlockingWaiter waiter)
    {
        // A worker blocked in Wait is not on the idle stack: notifiers will not wake it for new
        // work, so it sleeps briefly and looks again, and the awaited job's completion wakes it.
        // It polls the I/O driver first: the awaited job may wait for a socket nobody else polls.
        if (!waiter.IsDone && !PollIoNow())
        {
            Parker.Park(MyriadDefaults.HelpLoopParkMilliseconds);
        }
    }

    internal override void Wake() => Parker.Unpark();

    /// <summary>Its queue and next-job slot are visible to thieves already: only the wake is owed.</summary>
    internal override void ExposeQueuedWork()
    {
        if (HasStealableWork)
        {
            _runtime.NotifyWorkOfBlockingWorker();
        }
    }

    private void RunLoop()
    {
        Enter(this);
        PerThread.Current.RecordOwnStack(_runtime.Options.ThreadStackSize);
        PerThread state = PerThread.Current;
        try
        {
            while (true)
            {
                PollIoOnTick();
                WorkItem? item = NextLocal();
                if (item is null && _runtime.Idle.TryStartSearching(this))
                {
                    item = Search();
                }

                if (item is not null)
                {
                    _runtime.Idle.SearchSucceeded(this);
                    CountItemRun();
                    Trampoline.RunFromScheduler(state, item);
                    continue;
                }

                // Queues, guest runs, queues again (JobRuntime.GuestRuns.cs, step 2): a guest queues
                // the rest of its job and then lowers its count, so a count read as 0 is trusted only
                // with a look at the queues after it; the first look catches a guest that raises its
                // count and then takes its job's entry back out of the global queue.
                if (_runtime.IsShuttingDown && !_runtime.AnyWorkVisible())
                {
                    if (!_runtime.HasGuests && !_runtime.AnyWorkVisible())
                    {
                        break;
                    }

                    // A guest's job may still queue the rest of itself, and nothing wakes a worker
                    // when a guest run ends: look again shortly.
                    Parker.Park(MyriadDefaults.HelpLoopParkMilliseconds);
                    continue;
                }

                _runtime.Idle.Park(this);
            }
        }
        finally
        {
            // A worker leaves from the search (the shutdown check follows a failed one, and a
            // shutdown park returns searching): count it out, or Stats and the searching-workers
            // metric would report a search on a runtime with no threads left.
            _runtime.Idle.StopSearching(this);
            _runtime.OnWorkerExitedIo();
            _runtime.OnWorkerExited();
        }
    }

    /// <summary>The next item from this worker's own sources, in fairness order.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private WorkItem? NextLocal()
    {
        if (_ioCountdown > 0)
        {
            _ioCountdown--;
        }

        WorkItem? item;
        // The emptiness check is TakeFrom's own, repeated here so that the usual tick (nothing woken)
        // costs one volatile read and no call.
        if (!_runtime.WokenQueue.IsEmpty && TakeFrom(_runtime.WokenQueue) is { } woken)
        {
            return woken;
        }

        if (--_globalCountdown <= 0)
        {
            _globalCountdown = _runtime.Options.GlobalQueueInterval;
            if (_runtime.GlobalQueue.TryDequeue(out item))
            {
                return item;
            }
        }

        if (_nextUses < _runtime.Options.NextSlotBudget)
        {
            item = Volatile.Read(ref _next) is null ? null : Interlocked.Exchange(ref _next, null);
            if (item is not null)
            {
                _nextUses++;
                return item;
            }
        }
        else
        {
            // Budget spent: the slot's occupant goes to the back of the queue, behind older work.
            item = Interlocked.Exchange(ref _next, null);
            if (item is not null)
            {
                _queue.Owner.Push(item, _runtime.Overflow);
            }
        }

        _nextUses = 0;
        return _queue.Owner.Pop() ?? TakeFromGlobal();
    }

    /// <summary>
    /// Takes from the global queue when this worker's own queue is empty: one item to run and a
    /// fair share of the rest (the queue length divided among the workers, at most half of this
    /// worker's ring, Go's rule) into the own queue, in one lock acquisition.
    /// </summary>
    internal WorkItem? TakeFromGlobal() => TakeFrom(_runtime.GlobalQueue);

    /// <summary>
    /// <see cref="TakeFromGlobal"/> for either injection queue. Taken from the woken queue while the
    /// own queue is full, the share is just the one item to run.
    /// </summary>
    private WorkItem? TakeFrom(InjectionQueue queue)
    {
        if (queue.IsEmpty)
        {
            return null;
        }

        int share = Math.Min((queue.Count / _runtime.Workers.Length) + 1, _queue.Capacity / 2);
        int room = _queue.Capacity - _queue.Count;
        return queue.TryDequeueBatch(_queue.Owner, Math.Min(share, room) - 1, out WorkItem? item) ? item : null;
    }
}
