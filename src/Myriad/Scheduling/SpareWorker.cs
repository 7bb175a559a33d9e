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
///    shutdown), then exit. A spare is never on the idle stack: it is there for one stall and leaves
///    when the stall is over.</para>
/// <para>Work a spare schedules goes to the injection queue, not to its own run queue: its run queue
/// only ever holds items it stole, which it runs before it exits, so nothing is stranded by its
/// leaving. Those few items are invisible to other workers' searches meanwhile, the same trade a
/// worker makes when it steals half of a queue.</para>
/// </remarks>
internal sealed class SpareWorker : SchedulerContext
{
    private readonly MultiThreadRuntime _runtime;
    private readonly LocalQueue _queue;
    private readonly Parker _parker = new();

    internal SpareWorker(MultiThreadRuntime runtime)
        : base(runtime)
    {
        _runtime = runtime;
        _queue = new LocalQueue(runtime.Options.LocalQueueCapacity);
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
                    continue;
                }

                long now = Environment.TickCount64;
                if (idleSince == 0)
                {
                    idleSince = now;
                }

                if (_runtime.IsShuttingDown || now - idleSince >= _runtime.Options.SpareThreadDelayMilliseconds)
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
