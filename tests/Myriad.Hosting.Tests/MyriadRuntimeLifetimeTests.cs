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

public class MyriadRuntimeLifetimeTests
{
    /// <summary>How long a test waits for something that should happen at once: a bound against hangs, not a timing.</summary>
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task StartAsync_RuntimeRunsJobsOnItsWorkers()
    {
        using IHost host = TestHost.Build(new LogCapture(), services => services.AddMyriad());
        await host.StartAsync();
        var runtime = host.Services.GetRequiredService<JobRuntime>();

        bool onWorker = await runtime.Spawn(runtime, static rt => Job.FromResult(rt.IsRuntimeThread)).AsTask().WaitAsync(Patience);

        Assert.True(onWorker);
        await host.StopAsync();
    }

    [Fact]
    public async Task StopAsync_QueuedJobs_DrainBeforeRuntimeIsDisposed()
    {
        using IHost host = TestHost.Build(new LogCapture(), services => services.AddMyriad());
        await host.StartAsync();
        var runtime = host.Services.GetRequiredService<JobRuntime>();
        using var gate = new ManualResetEventSlim();

        // Both workers block on the gate, so the increments stay queued until after StopAsync began.
        StrongBox<int> counter = QueueBehindBlockedWorkers(runtime, gate);

        Task stop = host.StopAsync();
        await Task.Delay(50);
        gate.Set();
        await stop.WaitAsync(Patience);

        Assert.True(runtime.IsDisposed);
        Assert.Equal(1000, Volatile.Read(ref counter.Value));
        Assert.Throws<ObjectDisposedException>(() => runtime.SpawnDetached(0, static _ => { }));
    }

    /// <summary>Blocks both workers on <paramref name="gate"/> and queues 1,000 increments behind them.</summary>
    private static StrongBox<int> QueueBehindBlockedWorkers(JobRuntime runtime, ManualResetEventSlim gate)
    {
        var counter = new StrongBox<int>();
        for (int i = 0; i < 2; i++)
        {
            runtime.SpawnDetached(gate, static g => g.Wait());
        }

        for (int i = 0; i < 1000; i++)
        {
            runtime.SpawnDetached(counter, static c => Interlocked.Increment(ref c.Value));
        }

        return counter;
    }

    [Fact]
    public async Task StopAsync_DrainOutlastsShutdownTimeout_ReturnsAndLogsWarning()
    {
        var logs = new LogCapture();
        using var gate = new ManualResetEventSlim();
        IHost host = TestHost.Build(logs, null, services => services.AddMyriad(), shutdownTimeout: TimeSpan.FromMilliseconds(200));
        try
        {
            await host.StartAsync();
            var runtime = host.Services.GetRequiredService<JobRuntime>();
            runtime.SpawnDetached(gate, static g => g.Wait());

            await host.StopAsync().WaitAsync(Patience);

            Assert.False(gate.IsSet);
            Assert.Contains(logs.Entries, e => e.Category == "Myriad" && e.Level == LogLevel.Warning && e.Id.Name == "DrainTimedOut");
        }
        finally
        {
            gate.Set(); // the drain then ends, and disposing the host does not wait on a blocked worker
            host.Dispose();
        }
    }

    [Fact]
    public async Task Dispose_AfterTheDrainTimedOut_ReturnsWithoutWaitingForTheDrain()
    {
        // A job that ignores every cancellation keeps the drain going forever: once the shutdown
        // timeout expired, disposing the host (the container disposes the runtime again) must not
        // wait for it, or the process never exits.
        var logs = new LogCapture();
        var stop = new StrongBox<bool>();
        IHost host = TestHost.Build(logs, null, services => services.AddMyriad(), shutdownTimeout: TimeSpan.FromMilliseconds(200));
        try
        {
            await host.StartAsync();
            var runtime = host.Services.GetRequiredService<JobRuntime>();
            runtime.SpawnDetached(stop, static async s =>
            {
                while (!Volatile.Read(ref s.Value))
                {
                    await Task.Yield();
                }
            });

            await host.StopAsync().WaitAsync(Patience);
            Assert.Contains(logs.Entries, e => e.Category == "Myriad" && e.Id.Name == "DrainTimedOut");

            await Task.Run(host.Dispose).WaitAsync(Patience);
            Assert.False(Volatile.Read(ref stop.Value));
        }
        finally
        {
            Volatile.Write(ref stop.Value, true); // the drain ends, and the workers leave
        }
    }

    [Fact]
    public async Task Dispose_WithoutStop_DrainsQueuedJobs()
    {
        // Disposing a host that was never stopped disposes the runtime through the container,
        // outside the shutdown timeout: the drain is not cut short (documented on AddMyriad, with
        // the consequence that a job that never ends makes Dispose wait for it).
        IHost host = TestHost.Build(new LogCapture(), null, services => services.AddMyriad(), shutdownTimeout: TimeSpan.FromMilliseconds(1));
        await host.StartAsync();
        var runtime = host.Services.GetRequiredService<JobRuntime>();
        using var gate = new ManualResetEventSlim();
        StrongBox<int> counter = QueueBehindBlockedWorkers(runtime, gate);

        Task dispose = Task.Run(host.Dispose);
        await Task.Delay(50);
        gate.Set();
        await dispose.WaitAsync(Patience);

        Assert.True(runtime.IsDisposed);
        Assert.Equal(1000, Volatile.Read(ref counter.Value));
    }

    [Fact]
    public async Task StoppedAsync_TimeoutAlreadyExpired_LogsThatTheDrainWasNotAwaited()
    {
        // Other services used up the shutdown timeout: the host calls StoppedAsync with a token
        // that is already canceled, and the drain was given no time, so it must not be blamed.
        // (Called directly: a host whose timeout expired may not wait for, or even reach, the
        // lifetime services' StoppedAsync.)
        var logs = new LogCapture();
        using var factory = LoggerFactory.Create(builder => builder.AddProvider(logs));
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var gate = new ManualResetEventSlim();
        runtime.SpawnDetached(gate, static g => g.Wait()); // the drain cannot end before the check
        var lifetime = new MyriadRuntimeLifetime(runtime, factory);
        try
        {
            await lifetime.StoppedAsync(new CancellationToken(canceled: true)).WaitAsync(Patience);

            Assert.Contains(logs.Entries, e => e.Category == "Myriad" && e.Level == LogLevel.Warning && e.Id.Name == "DrainNotAwaited");
            Assert.DoesNotContain(logs.Entries, e => e.Id.Name == "DrainTimedOut");
            Assert.True(runtime.IsDisposed);
            await Task.Run(runtime.Dispose).WaitAsync(Patience); // the container's disposal returns at once
        }
        finally
        {
            gate.Set();
        }
    }

    [Fact]
    public async Task UnobservedException_OfDetachedJob_IsLoggedAsError()
    {
        var logs = new LogCapture();
        using IHost host = TestHost.Build(logs, services => services.AddMyriad(o => o.Name = "logging-runtime"));
        await host.StartAsync();
        var runtime = host.Services.GetRequiredService<JobRuntime>();

        runtime.SpawnDetached(0, static _ => throw new InvalidTimeZoneException("detached failure"));
        await host.StopAsync(); // drains: the failure has been reported when this returns

        var entry = Assert.Single(logs.Entries, e => e.Id.Name == "UnobservedJobException");
        Assert.Equal(LogLevel.Error, entry.Level);
        Assert.Equal("Myriad", entry.Category);
        Assert.IsType<InvalidTimeZoneException>(entry.Exception);
        Assert.Contains("logging-runtime", entry.Message);
    }

    private sealed class StrongBox<T>
    {
        public T Value = default!;
    }
}
