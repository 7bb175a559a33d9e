using System;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Myriad.Scheduling;

namespace Myriad.Hosting;

/// <summary>
/// Ties the registered runtime to the host's lifetime. A lifecycle service rather than a plain
/// hosted service so that the order of registration does not matter:
/// <list type="number">
/// <item><see cref="StartingAsync"/>, before any hosted service's <c>StartAsync</c>, creates the
/// runtime (its workers start), so that services can spawn on it while they start.</item>
/// <item><see cref="StoppedAsync"/>, after every hosted service's <c>StopAsync</c> returned,
/// disposes it: no service still spawns, and the queued jobs drain. The wait is bounded by the
/// token, which the host cancels when its shutdown timeout expires; the drain then goes on
/// without the host, which logs a warning and proceeds, and disposing the host (which disposes the
/// runtime again) does not wait for it either.</item>
/// </list>
/// A host disposed without being stopped calls neither: the container disposes the runtime, and
/// that drain is unbounded. Bounding it here (disposing from this service's own Dispose, with the
/// shutdown timeout) was weighed and left out: the container disposes this service before the
/// hosted services created ahead of it (those registered before AddMyriad), so the runtime would
/// refuse their spawns, and could end their bodies canceled without running their catch and
/// finally blocks, before their stopping tokens are even canceled; and HostOptions lives in
/// Microsoft.Extensions.Hosting, which this package does not depend on.
/// </summary>
internal sealed class MyriadRuntimeLifetime(MultiThreadRuntime runtime, ILoggerFactory? loggerFactory = null) : IHostedLifecycleService
{
    private readonly ILogger _logger = loggerFactory?.CreateLogger(MyriadLog.Category) ?? NullLogger.Instance;

    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask; // the constructor's argument already created it

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public async Task StoppedAsync(CancellationToken cancellationToken)
    {
        bool expiredOnArrival = cancellationToken.IsCancellationRequested;
        try
        {
            // With the token: once the host's shutdown timeout expired, the container's own
            // disposal of the runtime returns at once instead of waiting for the drain.
            await runtime.DisposeAsync(cancellationToken).ConfigureAwait(false);
            MyriadLog.Drained(_logger, runtime.Name);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // A token canceled on arrival means other services used up the timeout: say so rather
            // than blame the drain, which was not given any time.
            if (expiredOnArrival)
            {
                MyriadLog.DrainNotAwaited(_logger, runtime.Name);
            }
            else
            {
                MyriadLog.DrainTimedOut(_logger, runtime.Name);
            }
        }
    }
}
