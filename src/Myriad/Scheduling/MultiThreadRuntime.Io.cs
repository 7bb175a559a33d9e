using System;
using System.Threading;
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
        return driver;
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
