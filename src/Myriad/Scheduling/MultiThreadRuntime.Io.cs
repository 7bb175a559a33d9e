using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;
using Myriad.Internal;
using Myriad.IO;

namespace Myriad.Scheduling;

public sealed partial class MultiThreadRuntime
{
    private IoDriver? _ioDriver;
    private int _ioExitedWorkers;

    /// <summary>The runtime's I/O driver once a socket asked for it; null before (workers then never poll).</summary>
    internal IoDriver? IoDriverOrNull => Volatile.Read(ref _ioDriver);

    /// <summary>
    /// The runtime's I/O driver, created on first use (Linux only: callers check
    /// <see cref="LinuxNative.IsSupported"/>).
    /// </summary>
    /// <remarks>
    /// Workers that parked before the driver existed sleep on their parkers, where no I/O event can
    /// reach them. So after publishing the driver (a full fence), one idle worker is notified: it
    /// searches, finds nothing and parks again, this time in the driver. A worker parking
    /// concurrently reads the driver after its own fence (step 2 of Park), so one of the two sees
    /// the other.
    /// </remarks>
    /// <exception cref="ObjectDisposedException">The runtime is shutting down.</exception>
    /// <exception cref="System.Net.Sockets.SocketException">No descriptor is left for the driver's
    /// epoll instance or its eventfd (<see cref="System.Net.Sockets.SocketError.TooManyOpenSockets"/>,
    /// as a socket that cannot be created).</exception>
    internal IoDriver GetOrCreateIoDriver()
    {
        IoDriver? driver = Volatile.Read(ref _ioDriver);
        if (driver is not null)
        {
            if (_watchdog is null)
            {
                TryEnsureWatchdog(); // its first start failed (below)
            }

            return driver;
        }

        ObjectDisposedException.ThrowIf(_shutdown, this);
        try
        {
            driver = IoDriver.Create();
        }
        catch (System.IO.IOException e) when (e.HResult is LinuxNative.EMFILE or LinuxNative.ENFILE)
        {
            // Out of descriptors: what a socket that cannot be created throws, so that callers
            // handle one exception for "no descriptor", whether the socket or the driver needed it.
            throw new System.Net.Sockets.SocketException((int)System.Net.Sockets.SocketError.TooManyOpenSockets, e.Message);
        }
        IoDriver? raced = Interlocked.CompareExchange(ref _ioDriver, driver, null);
        if (raced is not null)
        {
            driver.Dispose();
            return raced;
        }

        if (Volatile.Read(ref _ioExitedWorkers) == _workers.Length)
        {
            // Every worker left before seeing it: nobody would ever poll or close it.
            Interlocked.Exchange(ref _ioDriver, null)?.Dispose();
            throw new ObjectDisposedException(GetType().Name);
        }

        _idle.NotifyWork();
        TryEnsureWatchdog(); // it watches that somebody polls the driver (WatchIo)
        return driver;
    }

    /// <summary>
    /// Starts the watchdog for the driver, if a thread can be started: with no descriptor left, .NET
    /// fails a thread's start with <see cref="OutOfMemoryException"/>. The watchdog is a safety net
    /// (the workers poll the driver themselves), so the socket that asked for the driver goes on
    /// without it, and the next <c>ConnectAsync</c> or <c>Bind</c> on the runtime, or the next
    /// deferred wake (a spawn from a plain thread with a lazy-wake delay), tries again.
    /// </summary>
    private void TryEnsureWatchdog()
    {
        try
        {
            EnsureWatchdog();
        }
        catch (Exception e) when (e is OutOfMemoryException or ThreadStartException)
        {
        }
    }

    /// <summary>
    /// The watchdog's part in I/O, once per <see cref="RuntimeOptions.SpareThreadDelay"/> while the
    /// driver has sockets (Go's monitor thread polls the network the same way when nobody did for
    /// 10 ms). Only workers poll, between jobs or instead of sleeping; a worker that runs a job which
    /// blocks (a synchronous read on a socket's <c>Stream</c>, <c>Thread.Sleep</c>) polls no more, and
    /// its idle siblings may be asleep on their parkers (they found the token taken when they parked,
    /// and events cannot reach them there). With every worker so occupied, readiness that arrives
    /// would wait in the kernel for good, and the spare threads would never start: they start for
    /// queued work, and this work is not queued yet.
    /// 1. If somebody polled since the last look (<see cref="IoDriver.PollCount"/> moved) or holds the
    ///    token now (a worker blocked in <c>epoll_wait</c> holds it), stop.
    /// 2. If a worker is parked, it is asleep on its parker: wake it, and stop. It finds no work and
    ///    parks again, in the driver this time.
    /// 3. Otherwise every worker is busy or blocked: take the token and poll without blocking.
    /// 4. Hand the events to their sockets with this thread's trampoline depth at its limit, so that
    ///    every continuation they release is deferred to this thread's queue instead of running here
    ///    (this thread runs no job and no user code: a detached job's failure, which a cell observer
    ///    reports inline, raises its event from a queued item, see <see cref="PerThread.RunsNoUserCode"/>),
    ///    then queue them all on the runtime, where the stall check starts a spare thread to run them
    ///    if the workers stay blocked.
    /// </summary>
    private void WatchIo(ref long lastPolls)
    {
        IoDriver? driver = IoDriverOrNull;
        if (driver is null || driver.RegisteredCount == 0)
        {
            lastPolls = -1;
            return;
        }

        long polls = driver.PollCount;
        if (polls != lastPolls || driver.IsPollerHeld)
        {
            lastPolls = polls;
            return;
        }

        if (_idle.IdleCount != 0)
        {
            // A worker sleeps on its parker (it found the token taken when it parked): wake it
            // instead. It finds nothing to run, parks again and, the token being free, blocks in
            // the driver, where events reach it at once; a poll from here would leave it asleep.
            _idle.NotifyWork();
            return;
        }

        if (!driver.TryAcquirePoller())
        {
            return;
        }

        PerThread state = PerThread.Current;
        List<WorkItem>? released = null;
        try
        {
            int count = driver.Poll(0);
            if (count > 0)
            {
                state.RunsNoUserCode = true; // cell observers still run inline: see RaiseUnobservedException
                try
                {
                    driver.DispatchDeferred(count, state);
                }
                finally
                {
                    state.RunsNoUserCode = false;
                }

                while (state.Deferred is { } deferred && deferred.TryDequeue(out WorkItem? item))
                {
                    (released ??= []).Add(item);
                }
            }
        }
        finally
        {
            lastPolls = driver.PollCount;
            driver.ReleasePoller();
        }

        if (released is not null)
        {
            ScheduleBatch(CollectionsMarshal.AsSpan(released));
        }
    }

    /// <summary>Each worker on its way out; the last one closes the driver (no poller is left).</summary>
    internal void OnWorkerExitedIo()
    {
        if (Interlocked.Increment(ref _ioExitedWorkers) == _workers.Length)
        {
            Interlocked.Exchange(ref _ioDriver, null)?.Dispose();
        }
    }
}
