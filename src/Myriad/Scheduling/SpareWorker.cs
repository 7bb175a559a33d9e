using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>
/// A temporary thread of a <see cref="MultiThreadRuntime"/>, started when queued work makes no
/// progress while every worker is busy (see <c>MultiThreadRuntime.Compensation.cs</c>): the usual
/// cause is a worker blocked outside Myriad's control, such as a job calling <c>Task.Result</c> on a
/// task whose continuation is queued on this very runtime. It is one of the runtime's own threads
/// (<see cref="JobRuntime.IsRuntimeThread"/> is true there), so jobs it runs stay on their runtime.
/// </summary>
/// <remarks>
/// <para><b>Loop.</b>
/// 1. Take an item: its own run queue (items it stole), then the injection queue, then half of a
///    worker's run queue or a worker's next-job slot, as a searching worker does.
/// 2. Run it, and go back to 1.
/// 3. Found nothing: look again every <see cref="MyriadDefaults.HelpLoopParkMilliseconds"/> until it
///    has found nothing for a whole <see cref="RuntimeOptions.SpareThreadDelay"/> (at once during
///    shutdown), then exit.
/// 4. Every <see cref="RuntimeOptions.SpareThreadDelay"/>, between items, ask whether the stall is
///    over: some worker is parked or searching (there is room for the work without this thread), or
///    every worker ran a job since the last look, from its loop or inline by join helping (none is
///    blocked; see <see cref="Worker.JobsRun"/>). If so, hand the
///    items it stole to the injection queue and exit. Never during a disposal: the workers may have
///    left already, and a disposal drains queued work, so a spare drains as in step 3 then (it reads
///    the shutdown flag again after handing back, after the enqueue's full fence: either it sees the
///    disposal and takes the items back, or the workers' exit check sees the items).
/// A spare is never on the idle stack: it is there for one stall and leaves when the stall is over.
/// Step 3 alone is not enough under sustained load: a stall that ended (a worker back from a long
/// item, from the JIT compiling a big method at start-up, or from a blocking call) would leave the
/// spare finding work forever, one thread more than there are cores, each preempting the others
/// (the echo benchmark ran a spare beside both workers for its whole run that way). If a worker
/// blocks again later, the watchdog starts a new spare after another delay.</para>
/// <para>Work a spare schedules goes to the injection queue, not to its own run queue: its run queue
/// only ever holds items it stole, which it runs before it exits at step 3 or hands back at step 4,
/// so nothing is stranded by its leaving. Those few items are invisible to other workers' searches meanwhile, the same trade a
/// worker makes when it steals half of a queue.</para>
/// </remarks>
internal sealed class SpareWorker : SchedulerContext
{
    private readonly MultiThreadRuntime _runtime;
    private readonly LocalQueue _queue;
    private readonly Parker _parker = new();

    /// <summary>Each worker's <see cref="Worker.JobsRun"/> at the last look of step 4.</summary>
    private readonly long[] _workersRun;

    /// <summary>When step 4 last looked (<see cref="Environment.TickCount64"/>).</summary>
    private long _lastLook;

    internal SpareWorker(MultiThreadRuntime runtime)
        : base(runtime)
    {
        _runtime = runtime;
        _queue = new LocalQueue(runtime.Options.LocalQueueCapacity);
        _workersRun = new long[runtime.Workers.Length];
        ReadWorkersRun();
        _lastLook = Environment.TickCount64;
    }

    internal override JobRuntime Runtime => _runtime;

    /// <summary>Deferred continuations go where every worker can see them: this thread may leave soon.</summary>
    internal override void DeferLocal(WorkItem item) => _runtime.Schedule(item);

    internal override bool TryRunOne()
    {
        WorkItem? item = Take();
        if (item is null)
        {
            return false;
        }

        Trampoline.RunFromScheduler(item);
        return true;
    }

    internal override void IdleUntilWoken(BlockingWaiter waiter)
    {
        if (!waiter.IsDone)
        {
            _parker.Park(MyriadDefaults.HelpLoopParkMilliseconds);
        }
    }

    internal override void Wake() => _parker.Unpark();

    /// <summary>The items it stole are in its own run queue, which nobody else searches: they go back to the injection queue.</summary>
    internal override void ExposeQueuedWork() => HandBackStolen();

    /// <summary>Starts the thread; <see cref="MultiThreadRuntime.OnSpareExited"/> runs when it leaves.</summary>
    internal void Start()
    {
        var thread = new Thread(static s => ((SpareWorker)s!).RunLoop(), _runtime.Options.ThreadStackSize)
        {
            IsBackground = true,
            Name = $"{_runtime.Options.ThreadNamePrefix} spare",
        };
        thread.UnsafeStart(this);
    }

    private void RunLoop()
    {
        Enter(this);
        PerThread.Current.RecordOwnStack(_runtime.Options.ThreadStackSize);
        try
        {
            long idleSince = 0;
            while (true)
            {
                WorkItem? item = Take();
                if (item is not null)
                {
                    idleSince = 0;
                    Trampoline.RunFromScheduler(item);
                    if (!_runtime.IsShuttingDown && StallIsOver())
                    {
                        HandBackStolen();
                        if (!_runtime.IsShuttingDown)
                        {
                            break; // step 4
                        }

                        // A disposal began meanwhile: the workers may have left their loops already,
                        // and the drain must not end with the handed-back items still queued (they
                        // would be abandoned). Drain as in step 3 instead: Take finds them again.
                    }

                    continue;
                }

                long now = Environment.TickCount64;
                if (idleSince == 0)
                {
                    idleSince = now;
                }

                // Draining, a spare leaves once no guest runs and then no work is visible (in that
                // order: a guest queues the rest of its job before it lowers the count); a guest's
                // stale entry it took and found claimed must not let it leave while that job runs.
                if (_runtime.IsShuttingDown
                    ? !_runtime.HasGuests && !_runtime.AnyWorkVisible()
                    : now - idleSince >= _runtime.Options.SpareThreadDelayMilliseconds)
                {
                    break; // step 3: the stall is over (or the runtime drains: nothing new will come)
                }

                _parker.Park(MyriadDefaults.HelpLoopParkMilliseconds);
            }
        }
        finally
        {
            _runtime.OnSpareExited();
        }
    }

    /// <summary>Step 4: at most once per delay, whether the workers can do without this thread now.</summary>
    private bool StallIsOver()
    {
        long now = Environment.TickCount64;
        if (now - _lastLook < _runtime.Options.SpareThreadDelayMilliseconds)
        {
            return false;
        }

        _lastLook = now;
        MultiThreadRuntime.IdleCoordinator idle = _runtime.Idle;
        bool roomElsewhere = idle.IdleCount != 0 || idle.SearchingCount != 0;
        bool noneStuck = ReadWorkersRun();
        return roomElsewhere || noneStuck;
    }

    /// <summary>Records each worker's item count; true if every one moved since the last record.</summary>
    private bool ReadWorkersRun()
    {
        Worker[] workers = _runtime.Workers;
        bool allMoved = true;
        for (int i = 0; i < workers.Length; i++)
        {
            long run = Volatile.Read(ref workers[i].JobsRun);
            allMoved &= run != _workersRun[i];
            _workersRun[i] = run;
        }

        return allMoved;
    }

    /// <summary>Leaving early: what this thread stole goes where every worker can see it.</summary>
    private void HandBackStolen()
    {
        // Waking at once, not deferring the wake to this thread's next wait: it has none.
        PerThread state = PerThread.Current;
        while (_queue.Owner.Pop() is { } stolen)
        {
            _runtime.ScheduleResume(stolen, state);
        }
    }

    /// <summary>Step 1.</summary>
    private WorkItem? Take()
    {
        if (_queue.Owner.Pop() is { } own)
        {
            return own;
        }

        if (_runtime.WokenQueue.TryDequeue(out WorkItem? global) || _runtime.GlobalQueue.TryDequeue(out global))
        {
            return global;
        }

        foreach (Worker victim in _runtime.Workers)
        {
            if (victim.StealInto(_queue.Owner) is { } stolen)
            {
                return stolen;
            }
        }

        return null;
    }
}
