using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Hosting.Tests;

public class JobBackgroundServiceTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task ExecuteJobAsync_RunsOnRuntimeWorker()
    {
        using IHost host = TestHost.Build(new LogCapture(), services => services.AddMyriad().AddSingleton<Probe>().AddHostedService<ProbeService>());
        await host.StartAsync();
        Probe probe = host.Services.GetRequiredService<Probe>();

        Assert.True(await probe.StartedOnWorker.Task.WaitAsync(Patience));
        await host.StopAsync();
    }

    [Fact]
    public async Task StopAsync_CancelsStoppingToken_AndWaitsForTheBody()
    {
        using IHost host = TestHost.Build(new LogCapture(), services => services.AddMyriad().AddSingleton<Probe>().AddHostedService<ProbeService>());
        await host.StartAsync();
        Probe probe = host.Services.GetRequiredService<Probe>();
        await probe.StartedOnWorker.Task.WaitAsync(Patience);

        await host.StopAsync().WaitAsync(Patience);

        Assert.True(probe.SawCancellation);
        var service = host.Services.GetServices<IHostedService>().OfType<ProbeService>().Single();
        Assert.True(service.ExecuteTask!.IsCompleted);
    }

    [Fact]
    public async Task StopAsync_ServiceRegisteredBeforeAddMyriad_CanStillSpawnWhileStopping()
    {
        // Plain hosted services stop in reverse order, which would dispose a runtime registered
        // after the service first; the runtime is disposed only once every service has stopped.
        using IHost host = TestHost.Build(new LogCapture(), services => services.AddSingleton<Probe>().AddHostedService<ProbeService>().AddMyriad());
        await host.StartAsync();
        Probe probe = host.Services.GetRequiredService<Probe>();
        await probe.StartedOnWorker.Task.WaitAsync(Patience);

        await host.StopAsync().WaitAsync(Patience);

        Assert.Equal(42, probe.SpawnedWhileStopping);
    }

    [Fact]
    public async Task ExecuteJobAsync_Throws_HostLogsAndStops()
    {
        var logs = new LogCapture();
        using IHost host = TestHost.Build(logs, services => services.AddMyriad().AddHostedService<FailingService>());
        var lifetime = host.Services.GetRequiredService<IHostApplicationLifetime>();
        var stopping = new TaskCompletionSource();
        lifetime.ApplicationStopping.Register(() => stopping.TrySetResult());

        await host.StartAsync();
        await stopping.Task.WaitAsync(Patience);
        await host.StopAsync();

        Assert.Contains(logs.Entries, e => e.Level >= LogLevel.Error && e.Exception is TimeZoneNotFoundException);
    }

    [Fact]
    public async Task StartAsync_RuntimeAlreadyDisposed_BodyEndsCanceledInsteadOfFailing()
    {
        // What host.Dispose() without StopAsync can leave behind: BackgroundService runs
        // ExecuteAsync through Task.Run, which may come after the container disposed the runtime.
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        runtime.Dispose();
        var probe = new Probe();
        using var service = new ProbeService(runtime, probe);

        await service.StartAsync(CancellationToken.None);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => service.ExecuteTask!.WaitAsync(Patience));

        Assert.True(service.ExecuteTask!.IsCanceled);
        Assert.False(probe.StartedOnWorker.Task.IsCompleted);
    }

    [Fact]
    public async Task ExecuteAsync_StoppingTokenAlreadyCanceled_ReturnsTaskCanceledWithThatToken()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var probe = new Probe();
        using var service = new ProbeService(runtime, probe);
        using var cts = new CancellationTokenSource();
        cts.Cancel();

        Task execute = service.Execute(cts.Token);

        Assert.True(execute.IsCanceled);
        var canceled = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => execute);
        Assert.Equal(cts.Token, canceled.CancellationToken);
        Assert.False(probe.StartedOnWorker.Task.IsCompleted);
    }

    [Fact]
    public async Task Dispose_WithoutStop_RightAfterStart_NeverReportsObjectDisposedException()
    {
        // The host cancels the body's token and disposes the runtime, which races with the start
        // of ExecuteAsync; whichever comes first, the body must end canceled, as a plain
        // BackgroundService's does, not fail with the runtime's ObjectDisposedException. (The
        // body only waits: one that spawned once canceled could itself meet the disposed runtime.)
        // The window is narrow and this loop may not hit it; the two tests above pin it down.
        for (int i = 0; i < 20; i++)
        {
            var logs = new LogCapture();
            IHost host = TestHost.Build(logs, services => services.AddMyriad().AddHostedService<WaitingService>());
            await host.StartAsync();
            var service = host.Services.GetServices<IHostedService>().OfType<WaitingService>().Single();

            host.Dispose();
            await Task.WhenAny(service.ExecuteTask!).WaitAsync(Patience);

            Assert.False(service.ExecuteTask!.IsFaulted, service.ExecuteTask.Exception?.ToString());
            Assert.DoesNotContain(logs.Entries, e => e.Exception is ObjectDisposedException);
        }
    }

    [Fact]
    public void Constructor_NullRuntime_Throws() =>
        Assert.Throws<ArgumentNullException>(() => new FailingService(null!));

    private sealed class Probe
    {
        internal TaskCompletionSource<bool> StartedOnWorker { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        internal volatile bool SawCancellation;

        internal int SpawnedWhileStopping;
    }

    private sealed class ProbeService(JobRuntime runtime, Probe probe) : JobBackgroundService(runtime)
    {
        protected override async Job ExecuteJobAsync(CancellationToken stoppingToken)
        {
            probe.StartedOnWorker.TrySetResult(Runtime.IsRuntimeThread);
            try
            {
                await Job.Delay(Timeout.InfiniteTimeSpan, stoppingToken);
            }
            catch (OperationCanceledException)
            {
                probe.SawCancellation = true;
            }

            probe.SpawnedWhileStopping = await Runtime.Spawn(0, static _ => Job.FromResult(42));
        }

        /// <summary>Calls the protected <see cref="JobBackgroundService"/>'s ExecuteAsync directly.</summary>
        internal Task Execute(CancellationToken stoppingToken) => ExecuteAsync(stoppingToken);
    }

    private sealed class WaitingService(JobRuntime runtime) : JobBackgroundService(runtime)
    {
        protected override async Job ExecuteJobAsync(CancellationToken stoppingToken) =>
            await Job.Delay(Timeout.InfiniteTimeSpan, stoppingToken);
    }

    private sealed class FailingService(JobRuntime runtime) : JobBackgroundService(runtime)
    {
        protected override async Job ExecuteJobAsync(CancellationToken stoppingToken)
        {
            await Job.Delay(1, stoppingToken);
            throw new TimeZoneNotFoundException("service failure");
        }
    }
}
