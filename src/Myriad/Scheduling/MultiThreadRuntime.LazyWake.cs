using System;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

public sealed partial class MultiThreadRuntime
{
    private GuestContext? _guest;
    private Thread? _watchdog;
    private readonly Parker _watchdogParker = new();
    private int _wakeTimerArmed;

    /// <summary>
    /// Queues work that comes from a thread that is not one of our workers.
    /// </summary>
    /// <remarks>
    /// <para><b>Why lazy.</b> Waking a parked worker costs a futex call here and a context switch
    /// there, several microseconds, and the woken worker then spins looking for work: this is how
    /// tiny tasks make the .NET thread pool burn every core (the tiny-tasks experiment of docs/experiments.md). Yet a plain thread that
    /// spawns a job very often waits for it at once, and then runs it itself
    /// (<see cref="EnterInlineRun"/>), which needs no worker at all.</para>
    /// <para>A worker that spawns a single job follows the same idea (see <see cref="Schedule(WorkItem, PerThread)"/>):
    /// it most likely runs that job next itself, so the wake is left to the timer, which pays it
    /// only if the job is still queued when it fires.</para>
    /// <para><b>Protocol.</b>
    /// 1. Enqueue on the injection queue.
    /// 2. If no worker is parked, or a worker is searching, nothing more is needed (they look there).
    ///    A resume (<see cref="ScheduleResume"/>) notifies here too: its thread never runs the item.
    /// 3. Otherwise the wake is owed but deferred: remember this runtime in the thread's pending-wake
    ///    slot (first paying a wake still owed from an earlier spawn), and arm the wake timer.
    /// 4. The owed wake is paid (a normal notify, if the injection queue is still non-empty) at the
    ///    thread's next interaction that shows it will not run the job itself: another spawn, an
    ///    asynchronous await of a job handle, a blocking wait that has to sleep; or, failing all of
    ///    these, by the watchdog (<see cref="WatchdogLoop"/>) when the work stays visible without
    ///    progress for a whole <see cref="RuntimeOptions.LazyWakeDelay"/>.
    /// 5. A waiting thread that runs its own job takes the item back out of the queue; if the queue
    ///    is then empty the owed wake is cancelled.
    /// No item can be stranded: until a worker takes it, either a worker is awake and will reach the
    /// injection queue (parking re-checks it, see <see cref="IdleCoordinator"/>), or the timer is
    /// armed. The cost is a start latency of at most the delay for a job spawned from a plain thread
    /// that then neither waits, awaits nor spawns again. (A worker that stays awake but keeps running
    /// jobs inline by join helping reaches the queue only when it comes back to its loop; the
    /// watchdog bounds that wait, see <see cref="CheckStall"/>.)</para>
    /// </remarks>
    private void ScheduleFromOutside(WorkItem item, PerThread state, bool mayDeferWake)
    {
        _global.Enqueue(item);

        // Store -> load: the reads below (searching and idle counts, the armed flag, and the caller's
        // shutdown check) must not be satisfied before the enqueue is visible. The lock's exit is only
        // a release store, and each of those reads pairs with a thread that writes its flag with a
        // full fence and then looks at the queue (a parking worker, the watchdog disarming, the last
        // worker exiting): without this fence both sides could miss each other and the item would sit
        // in the queue with nobody coming for it.
        Interlocked.MemoryBarrier();
        int delay = _options.LazyWakeDelayMilliseconds;
        if (!mayDeferWake || delay == 0 || _idle.SearchingCount != 0 || _idle.IdleCount == 0)
        {
            _idle.NotifyWork();
            return;
        }

        PayOwedWake(state);
        state.PendingWake = Id;
        ArmWakeTimer();
    }

    /// <summary>
    /// A worker's own work that it will most likely run itself (its next-job slot) but that could
    /// wait behind a long item: wake a sibling only if it is still there after the lazy-wake delay
    /// (at once when the delay is zero).
    /// </summary>
    internal void OfferLater()
    {
        if (_options.LazyWakeDelayMilliseconds == 0)
        {
            _idle.NotifyWork();
        }
        else
        {
            ArmWakeTimer();
        }
    }

    /// <summary>Makes sure the watchdog looks at the queues within the lazy-wake delay.</summary>
    private void ArmWakeTimer()
    {
        if (Volatile.Read(ref _wakeTimerArmed) == 0 && Interlocked.CompareExchange(ref _wakeTimerArmed, 1, 0) == 0)
        {
            try
            {
                EnsureWatchdog();
            }
            catch (Exception e) when (e is OutOfMemoryException or ThreadStartException)
            {
                // The watchdog's thread could not start (no memory, or no descriptor for a thread).
                // Left armed, the flag would keep every later deferred wake from reaching a
                // watchdog, and parked workers would miss queued work: disarm, wake a parked
                // worker at once if there is one, and let the next deferral try to start the
                // thread again. The item is queued already, so the caller must not see the
                // exception either.
                Volatile.Write(ref _wakeTimerArmed, 0);
                _idle.NotifyWork(watchForStall: false); // the stall watch would arm, and fail, again
            }
        }
    }

    /// <summary>Step 4: pays the wake this thread owes, if any.</summary>
    internal static void PayOwedWake() => PayOwedWake(PerThread.CurrentOrNull);

    /// <summary><see cref="PayOwedWake()"/> for a caller that already holds the thread's state.</summary>
    internal static void PayOwedWake(PerThread? state)
    {
        if (state is { PendingWake: not 0 and short id })
        {
            state.PendingWake = 0;
            if (RuntimeRegistry.Find(id) is MultiThreadRuntime runtime && !runtime._global.IsEmpty)
            {
                runtime._idle.NotifyWork();
            }
        }
    }

    /// <summary>
    /// Step 5: a plain thread runs a job it spawned; take its queue entry back, and let the thread act
    /// as a guest of the runtime for the synchronous part of the job (see <see cref="GuestContext"/>).
    /// </summary>
    internal override SchedulerContext? EnterInlineRun(WorkItem item, PerThread state)
    {
        _global.TryTakeBackLast(item);
        if (state.PendingWake == Id && _global.IsEmpty)
        {
            state.PendingWake = 0;
        }

        SchedulerContext? current = state.Context;
        if (current is null)
        {
            state.Context = _guest ??= new GuestContext(this);
        }

        return current;
    }

    /// <summary>A worker-side notify found every worker busy: make sure the watchdog looks for a stall.</summary>
    internal void WatchForStall()
    {
        if (_options.MaxSpareThreads != 0)
        {
            ArmWakeTimer();
        }
    }

    /// <summary>
    /// Step 3 of a tick found stuck work. If no worker is parked or searching, no wake can help; once
    /// that has lasted <paramref name="delayMilliseconds"/>, start a spare thread (see
    /// <see cref="TryStartSpare"/>). The delay is <see cref="RuntimeOptions.SpareThreadDelay"/> when
    /// some worker may be blocked, and <see cref="MyriadDefaults.BusyStallFactor"/> times that while
    /// every worker keeps running jobs; such a spare leaves at its first look if every worker still
    /// moves (see <see cref="SpareWorker"/>, step 4), after running some of the work.
    /// </summary>
    private void CheckStall(ref long stalledSince, long delayMilliseconds)
    {
        if (_idle.IdleCount != 0 || _idle.SearchingCount != 0 || _options.MaxSpareThreads == 0)
        {
            stalledSince = 0;
            return;
        }

        long now = Environment.TickCount64;
        if (stalledSince == 0)
        {
            stalledSince = now;
        }
        else if (now - stalledSince >= delayMilliseconds)
        {
            stalledSince = 0;
            TryStartSpare();
        }
    }

    /// <summary>Starts the watchdog if it is not running yet, and makes it look at once (it then times its sleep by what it watches).</summary>
    private void EnsureWatchdog()
    {
        if (_watchdog is null)
        {
            StartWatchdog();
        }

        _watchdogParker.Unpark();
    }

    private void StartWatchdog()
    {
        lock (_watchdogParker)
        {
            if (_watchdog is not null)
            {
                return;
            }

            var thread = new Thread(static r => ((MultiThreadRuntime)r!).WatchdogLoop(), MyriadDefaults.WatchdogStackSize)
            {
                IsBackground = true,
                Name = $"{_options.ThreadNamePrefix} wake watchdog",
            };
            thread.UnsafeStart(this);
            _watchdog = thread;
        }
    }

    /// <summary>
    /// The lazy-wake timer: a thread of its own that sleeps on a parker while nothing is armed, and
    /// otherwise looks at the queues once per delay. A <see cref="Timer"/> would run its callback on
    /// the .NET thread pool, whose worker then spins before sleeping: at one tick per millisecond,
    /// exactly the idle-core burn this scheduler exists to avoid.
    /// </summary>
    /// <remarks>
    /// Each tick:
    /// 0. Once per <see cref="RuntimeOptions.SpareThreadDelay"/>, whether armed or not, see that somebody
    ///    polls the I/O driver (<see cref="WatchIo"/>).
    /// 1. Disarm.
    /// 2. If no work is visible, sleep until re-armed.
    /// 3. Otherwise look at each place that holds work: a worker's run queue and next-job slot, and
    ///    the injection queue. Work there is stuck if that place did not move for a whole tick: the
    ///    worker ran no item from its loop, or no item left the injection queue (a take-back by a
    ///    waiting spawner included); a job run inline by join helping does not count, since it
    ///    moves nothing that was queued before. If anything is stuck, wake a worker; if there is none
    ///    to wake and that lasts while some worker ran no job at all for a tick (see
    ///    <see cref="Worker.JobsRun"/>), start a spare thread (see <see cref="CheckStall"/>). Workers
    ///    that all keep running jobs (from their loop or inline) are busy, not blocked: a spare
    ///    thread would only compete with them for the cores (a spawn tree ran 15-25% slower on 2
    ///    cores with one), so queued work waits for the first of them to come back to its loop, as
    ///    behind any long item, but only for <see cref="MyriadDefaults.BusyStallFactor"/> stall
    ///    delays (<see cref="CheckStall"/>).
    /// 4. Re-arm, and look again next tick while work stays visible.
    /// Progress is judged per place, not for the runtime as a whole: an item queued behind a worker
    /// that runs one long item is stuck even while the other workers keep running their own work.
    /// Work that moves along is left alone: waking a worker for an item that its own worker, or
    /// its spawner about to take it back, will run next only burns that worker's core. A stuck
    /// item is therefore picked up within two delays, as long as some worker is parked.
    /// </remarks>
    private void WatchdogLoop()
    {
        int delay = Math.Max(1, _options.LazyWakeDelayMilliseconds);
        long[] lastRun = new long[_workers.Length];
        long[] lastJobs = new long[_workers.Length];
        long lastRemovals = -1;
        long stalledSince = 0;
        long busySince = 0;
        long lastPolls = -1;
        long lastIoLook = 0;
        int ioInterval = _options.SpareThreadDelayMilliseconds;
        Array.Fill(lastRun, -1);
        Array.Fill(lastJobs, -1);

        // Not just until shutdown: a worker blocked during the drain still needs a spare thread.
        while (Volatile.Read(ref _disposalFinished) == 0)
        {
            // Step 0, I/O (WatchIo): at most once per interval, armed or not; once the runtime has an
            // I/O driver, an unarmed watchdog sleeps for the interval rather than until re-armed (a
            // socket may register at any time; the look costs a few loads, 50 times a second).
            long now = Environment.TickCount64;
            if (now - lastIoLook >= ioInterval)
            {
                lastIoLook = now;
                WatchIo(ref lastPolls);
            }

            if (Volatile.Read(ref _wakeTimerArmed) == 0)
            {
                _watchdogParker.Park(IoDriverOrNull is not null ? ioInterval : Timeout.Infinite);

                continue;
            }

            Thread.Sleep(delay);
            Interlocked.Exchange(ref _wakeTimerArmed, 0);
            bool visible = false;
            bool stuck = false;
            bool allWorkersMoved = true;

            long removals = _global.Removals + _woken.Removals;
            if (!_global.IsEmpty || !_woken.IsEmpty)
            {
                visible = true;
                stuck |= removals == lastRemovals;
            }

            lastRemovals = removals;
            for (int i = 0; i < _workers.Length; i++)
            {
                Worker worker = _workers[i];
                long run = Volatile.Read(ref worker.ItemsRun);
                if (worker.HasStealableWork)
                {
                    visible = true;
                    stuck |= run == lastRun[i];
                }

                lastRun[i] = run;
                long jobs = Volatile.Read(ref worker.JobsRun);
                allWorkersMoved &= jobs != lastJobs[i];
                lastJobs[i] = jobs;
            }

            if (!visible)
            {
                stalledSince = 0; // nothing is waiting: a stall is continuous or it is not one
                busySince = 0;
                continue;
            }

            if (stuck)
            {
                _idle.NotifyWork();
                if (allWorkersMoved)
                {
                    // Busy, not blocked: a spare would only compete for the cores. Unless that
                    // lasts far longer than a stall may: workers that keep helping joins never come
                    // back to their loops, and work they left queued (a timer wake-up, a job another
                    // job waits for) would wait for as long as they keep at it.
                    stalledSince = 0;
                    CheckStall(ref busySince, (long)_options.SpareThreadDelayMilliseconds * MyriadDefaults.BusyStallFactor);
                }
                else
                {
                    busySince = 0;
                    CheckStall(ref stalledSince, _options.SpareThreadDelayMilliseconds);
                }
            }
            else
            {
                stalledSince = 0;
                busySince = 0;
            }

            Interlocked.Exchange(ref _wakeTimerArmed, 1);
        }
    }
}
