using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

/// <summary>
/// The work-stealing runtime: a fixed set of worker threads, each with a bounded run queue and a
/// next-job slot, sharing a global queue. See <c>docs/design.md</c> for the protocols.
/// </summary>
/// <remarks>
/// <para><b>Disposal drains.</b> <see cref="JobRuntime.Dispose()"/> refuses new spawns
/// (<see cref="ObjectDisposedException"/>), lets the workers run every job already queued and every
/// continuation those jobs queue in turn, and returns when all queues are empty and the workers have
/// exited. A job suspended on something that never completes (a receive on a channel nobody writes)
/// is not queued and so does not hold up disposal: its handle simply stays pending. A job woken
/// after the disposal finished (a timer firing for such a job) ends canceled instead of running. Disposing
/// from one of the runtime's own workers only starts the shutdown and returns at once (waiting
/// there could deadlock on a worker blocked waiting for the disposing job); the drain then runs
/// as usual, and another thread's <see cref="JobRuntime.Dispose()"/> or
/// <see cref="JobRuntime.DisposeAsync()"/> waits for it. <c>await DisposeAsync()</c> in one of the
/// runtime's own jobs does the same as <c>Dispose()</c> there and completes at once, so the job goes
/// on and ends within the drain. A job that a plain thread runs inline because it waits for it
/// (<c>Wait()</c>, <c>Run</c>) counts as running: the workers stay until it suspends or ends, and then
/// run the rest of it as part of the drain (so such a job that blocks its thread, as a job that
/// blocks a worker, holds up another thread's <c>Dispose</c>; <c>DisposeAsync(CancellationToken)</c>
/// bounds that wait).</para>
/// <para><b>Blocking a worker.</b> Waiting synchronously on a worker (<c>job.Wait()</c>) keeps that
/// worker running other jobs until the awaited one completes, so it cannot deadlock the runtime;
/// blocking a worker on anything else (a lock, <c>Task.Result</c>, <c>Thread.Sleep</c>) takes it out
/// of service for that long. When queued work then waits for a whole
/// <see cref="RuntimeOptions.SpareThreadDelay"/> with every worker busy, the runtime starts a spare
/// thread of its own that runs it until the stall is over (at most
/// <see cref="RuntimeOptions.MaxSpareThreads"/> at once), so a job blocking on a task that needs
/// this runtime does not deadlock it.</para>
/// </remarks>
public sealed partial class MultiThreadRuntime : JobRuntime
{
    private readonly Worker[] _workers;
    private readonly InjectionQueue _global = new();

    /// <summary>
    /// Timer wake-ups (see <see cref="ScheduleBatch"/>): a second injection queue that every worker
    /// looks at before its own queue on every tick, so a job whose delay ended does not wait behind
    /// a backlog of spawned jobs that have not started yet.
    /// </summary>
    private readonly InjectionQueue _woken = new();
    private readonly RuntimeOptions _options;
    private readonly Action<WorkItem[]> _overflow;
    private volatile bool _shutdown;

    /// <summary>Creates and starts a runtime with default options.</summary>
    public MultiThreadRuntime()
        : this(new RuntimeOptions())
    {
    }

    /// <summary>Creates and starts a runtime.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    public MultiThreadRuntime(RuntimeOptions options)
        : base((options ?? throw new ArgumentNullException(nameof(options))).Name)
    {
        _options = options.Snapshot();
        _fencesOutsideSpawns = true;
        _mayStartSpawnsInline = _options.SpawnInlineBacklog > 0;
        _runQueueSpawnBacklog = Math.Min(_options.SpawnInlineBacklog, _options.LocalQueueCapacity);
        _overflow = _global.EnqueueBatch;
        _workers = new Worker[_options.WorkerCount];
        int started = 0;
        try
        {
            for (int i = 0; i < _workers.Length; i++)
            {
                _workers[i] = new Worker(this, i);
            }

            _idle = new IdleCoordinator(this);
            for (; started < _workers.Length; started++)
            {
                _workers[started].Start();
            }
        }
        catch
        {
            // A thread could not be created or started (out of memory, or of threads): nobody will
            // dispose a runtime whose constructor threw, so stop the workers already running
            // (nothing was queued, so they leave at once) and give the runtime's id back.
            _shutdown = true;
            _idle?.WakeAll();
            for (int i = 0; i < started; i++)
            {
                _workers[i].Join();
            }

            RuntimeRegistry.Release(this);
            throw;
        }

        RegisterMetrics();
    }

    /// <inheritdoc/>
    public override int WorkerCount => _workers.Length;

    /// <inheritdoc/>
    public override Diagnostics.SchedulerStats Stats()
    {
        long queued = _global.Count + _woken.Count;
        long steals = 0;
        long parks = 0;
        foreach (Worker worker in _workers)
        {
            queued += worker.QueuedCount;
            steals += worker.StealCount;
            parks += worker.ParkCount;
        }

        return new Diagnostics.SchedulerStats(queued, _idle.IdleCount, _idle.SearchingCount, steals, parks);
    }

    internal RuntimeOptions Options => _options;

    internal Worker[] Workers => _workers;

    internal InjectionQueue GlobalQueue => _global;

    internal InjectionQueue WokenQueue => _woken;

    internal Action<WorkItem[]> Overflow => _overflow;

    internal bool IsShuttingDown => _shutdown;

    internal override void Schedule(WorkItem item) => Schedule(item, PerThread.Current);

    internal override void Schedule(WorkItem item, PerThread state) => Schedule(item, state, mayDeferWake: true);

    /// <summary>
    /// A resume from outside (see <see cref="JobRuntime.ScheduleResume"/>): queued as any outside
    /// item, but its wake is paid at once. The queuing thread (an I/O completion, another runtime's
    /// worker) will neither wait for the job nor spawn again soon, so a deferred wake would only be
    /// paid by the watchdog, adding up to two lazy-wake delays to every cross-thread resume.
    /// </summary>
    internal override void ScheduleResume(WorkItem item, PerThread state) => Schedule(item, state, mayDeferWake: false);

    // AggressiveOptimization here and below: optimized from the first call, so that one-shot
    // programs do not run the spawn path as tier-0 code (docs/design.md, "Cold runs").
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private void Schedule(WorkItem item, PerThread state, bool mayDeferWake)
    {
        if (state.Context is Worker worker && worker.Runtime == this)
        {
            worker.PushLocal(item);

            // A lone item is most likely run next by this very worker (a job spawns a child and
            // awaits it); waking a sibling would only let it steal the child and bounce the parent
            // between cores. The wake is deferred to the timer instead, which pays it if the item
            // is still queued then (see ScheduleFromOutside for the same protocol). From the second
            // queued item, there is work to share: notify now. Beyond the second, the notify that
            // came with it covers this item too (a fan-out of ten children pays one notify, not
            // nine, each a full fence and reads of lines the other workers write): a worker woken by
            // it, or searching, comes to this queue; one that parks afterwards re-checks every queue
            // after announcing itself idle (IdleCoordinator, Park step 3) and sees this one, which
            // only thieves shrink; and pushes grow it one item at a time, so it reaches more than two
            // from one, through two, only by pushes made while it was already in view. The watchdog
            // armed at the first item keeps looking while work is visible (WatchdogLoop, step 4).
            int queued = worker.QueuedCount;
            if (queued == 2 || _options.LazyWakeDelayMilliseconds == 0)
            {
                _idle.NotifyWork();
            }
            else if (queued < 2)
            {
                ArmWakeTimer();
            }

            return;
        }

        if (_shutdown && IsDisposedAndDrained)
        {
            item.Abandon();
            return;
        }

        ScheduleFromOutside(item, state, mayDeferWake);

        // Closing the window where the last worker exits between the check above and the enqueue:
        // whoever observes "all workers gone" after queuing abandons what is left.
        if (_shutdown && IsDisposedAndDrained)
        {
            AbandonLeftovers();
        }
    }

    /// <summary>
    /// Work that reached the injection queue after the last worker left it: the disposal has
    /// finished, so nothing will run it here. Each item is abandoned (<see cref="WorkItem.Abandon"/>):
    /// a job ends canceled, anything else runs on the thread pool.
    /// </summary>
    private void AbandonLeftovers()
    {
        while (_woken.TryDequeue(out WorkItem? item) || _global.TryDequeue(out item))
        {
            item.Abandon();
        }
    }

    /// <summary>
    /// Queues a resume posted to Myriad's resume context from a thread that is not one of this
    /// runtime's (see <c>ForeignAwait.ResumeFromPost</c>), or posted while the disposal drains, so
    /// that the drain runs it; false once the drain is over, and the caller, who must not run user
    /// code, sends it to the thread pool instead. Nothing is abandoned on the caller's thread, also
    /// when the disposal finishes while this runs.
    /// </summary>
    /// <remarks>
    /// Protocol, against the workers' exit (<see cref="OnWorkerExited"/>):
    /// 1. Drained already: false.
    /// 2. Enqueue on the injection queue, then a full fence (<see cref="ScheduleFromOutside"/>),
    ///    pairing with the last exiting thread's count: either this thread sees every worker and
    ///    spare gone (step 3), or the last one's sweep (<see cref="FinishDisposal"/>) comes after the
    ///    enqueue and abandons the item on its own thread if no worker ran it. A worker that checked
    ///    the queues before the enqueue leaves without it, so a resume that races the end of the
    ///    drain may still be abandoned, its job's finally blocks not run; only one posted while the
    ///    drain runs is sure to run.
    /// 3. Drained now: take this item back if it is still queued (a sweeper took it otherwise) and
    ///    abandon it on the thread pool. Only this item: others in the queue belong to their own
    ///    schedulers' re-checks or to the last sweep, which the disposal's completion waits for
    ///    (a pool item would not be waited for). True, the item is taken care of either way.
    /// </remarks>
    internal bool TryScheduleUnlessDrained(WorkItem item, PerThread state)
    {
        if (IsDisposedAndDrained)
        {
            return false; // step 1
        }

        ScheduleFromOutside(item, state, mayDeferWake: false); // step 2
        if (IsDisposedAndDrained && _global.TryRemove(item))
        {
            ThreadPool.UnsafeQueueUserWorkItem(static left => left.Abandon(), item, preferLocal: false); // step 3
        }

        return true;
    }

    /// <summary>True once every worker and every spare thread has exited after disposal.</summary>
    private bool IsDisposedAndDrained => Volatile.Read(ref _exitedWorkers) == _workers.Length && Volatile.Read(ref _liveSpares) == 0;

    private int _exitedWorkers;

    /// <summary>
    /// Called by each worker as it leaves its loop after disposal. The last one moves what is left
    /// in the injection queue to the thread pool: an outside <see cref="Schedule(WorkItem, PerThread)"/>
    /// may have queued between that worker's last look and this count (its own re-check then still
    /// saw a worker alive), and when a worker disposed the runtime nobody joins the workers to sweep
    /// up afterwards. The increment is a full fence, pairing with the one after the enqueue.
    /// </summary>
    internal void OnWorkerExited()
    {
        // Step 3 of the spare protocol (see TryStartSpare): a spare still running keeps the drain open.
        if (Interlocked.Increment(ref _exitedWorkers) == _workers.Length && Volatile.Read(ref _liveSpares) == 0)
        {
            FinishDisposal();
        }
    }

    /// <summary>The worker whose thread the caller runs on, or null.</summary>
    private Worker? CurrentWorker()
    {
        foreach (Worker worker in _workers)
        {
            if (worker.IsCurrentThread)
            {
                return worker;
            }
        }

        return null;
    }

    /// <inheritdoc/>
    /// <remarks>The workers, and a guest thread (a plain thread running a job it waits for): the
    /// drain waits for a guest's run to end (<see cref="JobRuntime.EnterGuestRun"/>), so a guest
    /// that disposes must not block on the drain: it would wait for itself.</remarks>
    internal override bool OwnsCurrentThread => CurrentWorker() is not null || IsRuntimeThread;

    /// <summary>True when any queue visible to a searching worker holds work.</summary>
    internal bool AnyWorkVisible()
    {
        if (!_global.IsEmpty || !_woken.IsEmpty)
        {
            return true;
        }

        foreach (Worker worker in _workers)
        {
            if (worker.HasStealableWork)
            {
                return true;
            }
        }

        return false;
    }

    private protected override void DisposeCore()
    {
        // Spawns from other threads that were accepted must be queued before the workers may
        // leave, or the drain could miss them (the spawn fence, JobRuntime.SpawnFence.cs).
        WaitForSpawnsInFlight();
        _shutdown = true;
        _watchdogParker.Unpark();
        _idle.WakeAll();
        // Found by thread, not by the current context: a worker driving a single-threaded runtime
        // is in that runtime's context but is still one of ours; a worker of another runtime is an
        // outside thread here. A plain thread that runs one of our jobs inline (a guest, see
        // GuestContext) counts as ours too: it joined the workers, and deadlocked when one of them
        // waited for the job that called Dispose.
        if (OwnsCurrentThread)
        {
            // On a worker (or a spare thread, or a guest), Dispose only starts the shutdown. Waiting for the other workers could
            // deadlock: one of them may be blocked in a Wait for the very job that calls Dispose.
            // The workers (this one once its item returns) drain and exit; the last one abandons
            // the leftovers and completes the disposal (OnWorkerExited).
            return;
        }

        foreach (Worker worker in _workers)
        {
            worker.Join();
        }

        // A spare may still run the job a blocked worker was waiting for; the last one to leave
        // finishes the disposal (see TryStartSpare), so wait for it rather than cut it short.
        SpinWait spin = default;
        while (Volatile.Read(ref _liveSpares) != 0)
        {
            spin.SpinOnce(sleep1Threshold: 0);
        }

        FinishDisposal(); // the last worker or spare did too; this catches what came after it
        WaitForDisposalFinished(); // a leaving spare may still be giving back what it abandoned
    }
}
