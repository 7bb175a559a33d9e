using System;
using System.Threading;
using Myriad.IO;

using System.Collections.Generic;
using System.Runtime.InteropServices;
using Myriad.Internal;

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
    internal IoDriver GetOrCreateIoDriver()
    {
        IoDriver? driver = Volatile.Read(ref _ioDriver);
        if (driver is not null)
        {
            return driver;
        }

        ObjectDisposedException.ThrowIf(_shutdown, this);
        driver = IoDriver.Create();
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
        EnsureWatchdog(); // it watches that somebody polls the driver (WatchIo)
        return driver;
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
    /// 1. If nobody polled since the last look (<see cref="IoDriver.PollCount"/> unchanged) and nobody
    ///    holds the token now (a worker blocked in <c>epoll_wait</c> holds it), take the token and
    ///    poll without blocking.
    /// 2. Hand the events to their sockets with this thread's trampoline depth at its limit, so that
    ///    every continuation they release is deferred to this thread's queue instead of running here
    ///    (this thread runs no job and no user code), then queue them all on the runtime. A parked
    ///    worker is woken for them; if none is, the stall check starts a spare thread.
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

        if (!driver.TryAcquirePoller())
        {
            return;
        }

        var released = new List<WorkItem>();
        try
        {
            int count = driver.Poll(0);
            if (count > 0)
            {
                PerThread state = PerThread.Current;
                int depth = state.Depth;
                state.Depth = MyriadDefaults.MaxInlineDepth;
                try
                {
                    driver.Dispatch(count);
                }
                finally
                {
                    state.Depth = depth;
                }

                while (state.Deferred is { } deferred && deferred.TryDequeue(out WorkItem? item))
                {
                    released.Add(item);
                }
            }
        }
        finally
        {
            lastPolls = driver.PollCount;
            driver.ReleasePoller();
        }

        if (released.Count > 0)
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
