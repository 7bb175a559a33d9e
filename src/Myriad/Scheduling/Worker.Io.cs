using System.Threading;
using Myriad.Internal;
using Myriad.IO;

namespace Myriad.Scheduling;

/// <summary>
/// A worker's part in driving the runtime's I/O (see <see cref="IoDriver"/> and docs/io.md): it
/// parks in the driver instead of on its parker when it can take the poller token, and a busy worker
/// polls without blocking every <see cref="RuntimeOptions.IoPollInterval"/> ticks.
/// </summary>
/// <remarks>
/// <para><b>Parking in the driver (<see cref="Sleep"/>, step 4 of the idle coordinator's Park).</b>
/// The worker is on the idle stack, like any parked worker, and a notifier wakes it the same way:
/// 1. Take the poller token; if another worker holds it, sleep on the parker as usual.
/// 2. Announce the blocking poll (<c>_pollingIo</c> = 1, interlocked: a full fence).
/// 3. Consume a pending permit (<see cref="Parker.Park"/> with a zero timeout): if there was one, a
///    notifier already popped this worker, so do not block.
/// 4. Block in <c>epoll_wait</c>.
/// 5. Clear <c>_pollingIo</c>, leave the idle stack (unless a notifier popped it already) before
///    anything is dispatched, so that the wakes the dispatch makes go to other workers, then hand the
///    events to their sockets and release the token.</para>
/// <para><b>Unpark (<see cref="WakeIoPoller"/>).</b> The notifier first gives the parker's permit
/// (an interlocked exchange, a full fence), then reads <c>_pollingIo</c> and, if set, writes the
/// driver's eventfd. Either the worker's step 3 sees the permit, or the notifier sees the flag and
/// the eventfd interrupts step 4: no wake-up is lost. A late eventfd write or a leftover permit only
/// makes a later park return early once, which the loop tolerates.</para>
/// <para><b>Where woken jobs run.</b> The dispatch runs with the trampoline depth at its limit, so a
/// completed operation's continuation is queued on this worker (its next-job slot, the older ones in
/// its run queue, where idle siblings are notified and may steal them) instead of running inside the
/// poll: the jobs woken by I/O run on the worker that polled, after it gave the token back.</para>
/// </remarks>
internal sealed partial class Worker
{
    private int _pollingIo;

    /// <summary>The fairness tick: a busy worker looks at the driver now and then (never blocking).</summary>
    private void PollIoOnTick()
    {
        if (_ioCountdown == 0)
        {
            _ioCountdown = _runtime.Options.IoPollInterval;
            PollIoNow();
        }
    }

    /// <summary>
    /// Polls the driver without blocking, if there is one with registrations and the poller token is
    /// free, and queues the jobs that became ready on this worker. True if any event came in.
    /// </summary>
    /// <remarks>
    /// Also called by a worker blocked in <c>Wait()</c> before each short sleep
    /// (<see cref="IdleUntilWoken"/>): the awaited job may be waiting for a socket, and nobody else
    /// may poll for it (a runtime with one worker; or siblings asleep on their parkers because they
    /// found the token taken when they parked, which the driver's events cannot reach).
    /// </remarks>
    private bool PollIoNow()
    {
        IoDriver? driver = _runtime.IoDriverOrNull;
        if (driver is null || driver.RegisteredCount == 0 || !driver.TryAcquirePoller())
        {
            return false;
        }

        try
        {
            int count = driver.Poll(0);
            if (count > 0)
            {
                driver.DispatchDeferred(count, PerThread.Current);
                return true;
            }

            return false;
        }
        finally
        {
            driver.ReleasePoller();
        }
    }

    /// <summary>Steps 1 to 5 of parking in the driver; called by the idle coordinator instead of <see cref="Parker.Park"/>.</summary>
    internal void Sleep(MultiThreadRuntime.IdleCoordinator idle)
    {
        IoDriver? driver = _runtime.IoDriverOrNull;
        if (driver is null || !driver.TryAcquirePoller())
        {
            Parker.Park();

            // A permit may be stale: the completion of a job this worker waited for in Wait()
            // unparks it (IdleUntilWoken), possibly after the wait ended, and once a driver exists an
            // Unpark whose eventfd write ended an earlier poll leaves one too. Woken by that rather
            // than by a notifier (which pops the worker and marks it searching before unparking it),
            // the worker is still on the idle stack, and its next park would push it a second time:
            // the parked count would exceed the workers, and the watchdog, which starts a spare
            // thread only when no worker is parked, would never rescue a worker blocked on Task.Result.
            if (!IsSearching)
            {
                idle.LeaveIdle(this);
            }

            return;
        }

        try
        {
            Interlocked.Exchange(ref _pollingIo, 1);
            if (Parker.Park(0))
            {
                Volatile.Write(ref _pollingIo, 0);
                idle.LeaveIdle(this);
                return;
            }

            int count = driver.Poll(-1);
            Volatile.Write(ref _pollingIo, 0);
            idle.LeaveIdle(this);
            if (count > 0)
            {
                driver.DispatchDeferred(count, PerThread.Current);
            }
        }
        finally
        {
            Volatile.Write(ref _pollingIo, 0);
            driver.ReleasePoller();
        }
    }

    /// <summary>The notifier's half of the protocol, after the permit was given.</summary>
    private void WakeIoPoller()
    {
        if (Volatile.Read(ref _pollingIo) != 0)
        {
            _runtime.IoDriverOrNull?.Wake();
        }
    }
}
