using System;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Hosting;
using Myriad.Scheduling;

namespace Myriad.Hosting;

/// <summary>
/// A <see cref="BackgroundService"/> whose body is an <c>async Job</c> spawned on a Myriad runtime:
/// it starts on one of the runtime's workers and can spawn, await jobs and use channels there.
/// </summary>
/// <remarks>
/// The host treats it as any <see cref="BackgroundService"/>: <see cref="BackgroundService.StopAsync"/>
/// cancels the stopping token and waits for the body (bounded by the shutdown timeout), and a
/// failure of the body is logged and handled as the host's
/// <c>HostOptions.BackgroundServiceExceptionBehavior</c> says (it stops the host by default).
/// The runtime outlives the service: <see cref="MyriadServiceCollectionExtensions.AddMyriad(Microsoft.Extensions.DependencyInjection.IServiceCollection, Action{RuntimeOptions}?)"/>
/// disposes it only after every hosted service stopped.
/// </remarks>
/// <example>
/// <code>
/// sealed class Pump(JobRuntime runtime) : JobBackgroundService(runtime)
/// {
///     protected override async Job ExecuteJobAsync(CancellationToken stoppingToken)
///     {
///         while (!stoppingToken.IsCancellationRequested)
///             await Job.Delay(TimeSpan.FromSeconds(1), stoppingToken);
///     }
/// }
/// </code>
/// </example>
public abstract class JobBackgroundService : BackgroundService
{
    /// <summary>Creates the service; its body will run on <paramref name="runtime"/>.</summary>
    /// <param name="runtime">The runtime, usually the one <c>AddMyriad</c> registered.</param>
    /// <exception cref="ArgumentNullException"><paramref name="runtime"/> is null.</exception>
    protected JobBackgroundService(JobRuntime runtime)
    {
        ArgumentNullException.ThrowIfNull(runtime);
        Runtime = runtime;
    }

    /// <summary>The runtime the body runs on.</summary>
    protected JobRuntime Runtime { get; }

    /// <summary>
    /// The service's body, run as a job on <see cref="Runtime"/> when the host starts. It should end
    /// soon after <paramref name="stoppingToken"/> is canceled; ending with
    /// <see cref="OperationCanceledException"/> then counts as a normal stop.
    /// </summary>
    /// <param name="stoppingToken">Canceled when the host stops.</param>
    /// <returns>The job that represents the service's work.</returns>
    protected abstract Job ExecuteJobAsync(CancellationToken stoppingToken);

    /// <summary>Spawns <see cref="ExecuteJobAsync"/> on <see cref="Runtime"/> and returns it as a task for the host.</summary>
    /// <remarks>
    /// When <paramref name="stoppingToken"/> is already canceled or <see cref="Runtime"/> is already
    /// disposed, the body is not started and the task is canceled (with
    /// <paramref name="stoppingToken"/> when that is canceled), as a plain
    /// <see cref="BackgroundService"/>'s would be that had not started yet.
    /// </remarks>
    /// <param name="stoppingToken">Canceled when the host stops.</param>
    /// <returns>A task that completes when the body's job does.</returns>
    protected sealed override Task ExecuteAsync(CancellationToken stoppingToken)
    {
        // BackgroundService calls this through Task.Run. A host disposed without StopAsync (or
        // right after StartAsync) may already have canceled the token and disposed the runtime,
        // which a plain BackgroundService's body would just see as a cancellation. Spawning would
        // fail with ObjectDisposedException instead: a failure of the runtime, reported by the
        // host, where the service was merely stopped before it ran.
        if (stoppingToken.IsCancellationRequested || Runtime.IsDisposed)
        {
            return Canceled(stoppingToken);
        }

        try
        {
            return Runtime.Spawn((Service: this, Token: stoppingToken), static s => s.Service.ExecuteJobAsync(s.Token)).AsTask();
        }
        catch (ObjectDisposedException) when (stoppingToken.IsCancellationRequested || Runtime.IsDisposed)
        {
            return Canceled(stoppingToken); // the disposal came between the check and the spawn
        }
    }

    private static Task Canceled(CancellationToken stoppingToken) =>
        Task.FromCanceled(stoppingToken.IsCancellationRequested ? stoppingToken : new CancellationToken(canceled: true));
}
