using System;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

public sealed partial class MultiThreadRuntime
{
    private Timer? _wakeTimer;
    private GuestContext? _guest;
    private int _wakeTimerArmed;

    /// <summary>
    /// Queues work that comes from a thread that is not one of our workers.
    /// </summary>
    /// <remarks>
    /// <para><b>Why lazy.</b> Waking a parked worker costs a futex call here and a context switch
    /// there, several microseconds, and the woken worker then spins looking for work: this is how
    /// tiny tasks make the .NET thread pool burn every core (experiment E5). Yet a plain thread that
    /// spawns a job very often waits for it at once, and then runs it itself
    /// (<see cref="EnterInlineRun"/>), which needs no worker at all.</para>
    /// <para>A worker that spawns a single job follows the same idea (see <see cref="Schedule"/>):
    /// it most likely runs that job next itself, so the wake is left to the timer, which pays it
    /// only if the job is still queued when it fires.</para>
    /// <para><b>Protocol.</b>
    /// 1. Enqueue on the injection queue.
    /// 2. If no worker is parked, or a worker is searching, nothing more is needed (they look there).
    /// 3. Otherwise the wake is owed but deferred: remember this runtime in the thread's pending-wake
    ///    slot (first paying a wake still owed from an earlier spawn), and arm the wake timer.
    /// 4. The owed wake is paid (a normal notify, if the injection queue is still non-empty) at the
    ///    thread's next interaction that shows it will not run the job itself: another spawn, an
    ///    asynchronous await of a job handle, a blocking wait that has to sleep; or, failing all of
    ///    these, when the timer fires after <see cref="RuntimeOptions.LazyWakeDelay"/>.
    /// 5. A waiting thread that runs its own job takes the item back out of the queue; if the queue
    ///    is then empty the owed wake is cancelled.
    /// No item can be stranded: until a worker takes it, either a worker is awake and will reach the
    /// injection queue (parking re-checks it, see <see cref="IdleCoordinator"/>), or the timer is
    /// armed. The cost is a start latency of at most the delay for a job spawned from a plain thread
    /// that then neither waits, awaits nor spawns again.</para>
    /// </remarks>
    private void ScheduleFromOutside(WorkItem item)
    {
        _global.Enqueue(item);
        int delay = _options.LazyWakeDelayMilliseconds;
        if (delay == 0 || _idle.SearchingCount != 0 || _idle.IdleCount == 0)
        {
            _idle.NotifyWork();
            return;
        }

        PayOwedWake();
        PerThread.Current.PendingWake = this;
        ArmWakeTimer();
    }

    /// <summary>Makes sure the wake timer will fire within the lazy-wake delay.</summary>
    private void ArmWakeTimer()
    {
        if (Volatile.Read(ref _wakeTimerArmed) == 0 && Interlocked.CompareExchange(ref _wakeTimerArmed, 1, 0) == 0)
        {
            _wakeTimer ??= CreateWakeTimer();
            _wakeTimer.Change(_options.LazyWakeDelayMilliseconds, Timeout.Infinite);
        }
    }

    /// <summary>Step 4: pays the wake this thread owes, if any.</summary>
    internal static void PayOwedWake()
    {
        PerThread? state = PerThread.CurrentOrNull;
        MultiThreadRuntime? runtime = state?.PendingWake;
        if (runtime is not null)
        {
            state!.PendingWake = null;
            if (!runtime._global.IsEmpty)
            {
                runtime._idle.NotifyWork();
            }
        }
    }

    /// <summary>
    /// Step 5: a plain thread runs a job it spawned; take its queue entry back, and let the thread act
    /// as a guest of the runtime for the synchronous part of the job (see <see cref="GuestContext"/>).
    /// </summary>
    internal override SchedulerContext? EnterInlineRun(WorkItem item)
    {
        _global.TryTakeBackLast(item);
        PerThread state = PerThread.Current;
        if (state.PendingWake == this && _global.IsEmpty)
        {
            state.PendingWake = null;
        }

        SchedulerContext? current = state.Context;
        if (current is null)
        {
            state.Context = _guest ??= new GuestContext(this);
        }

        return current;
    }

    private Timer CreateWakeTimer() =>
        new(static s => ((MultiThreadRuntime)s!).OnWakeTimer(), this, Timeout.Infinite, Timeout.Infinite);

    private void OnWakeTimer()
    {
        Interlocked.Exchange(ref _wakeTimerArmed, 0);
        if (AnyWorkVisible())
        {
            _idle.NotifyWork();
        }
    }
}
