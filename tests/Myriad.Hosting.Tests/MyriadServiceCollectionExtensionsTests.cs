using System;
using System.Collections.Generic;
using System.Linq;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Hosting.Tests;

public class MyriadServiceCollectionExtensionsTests
{
    [Fact]
    public void AddMyriad_WithMyriadSection_BindsRuntimeOptions()
    {
        var logs = new LogCapture();
        using IHost host = TestHost.Build(logs, new Dictionary<string, string?>
        {
            ["Myriad:WorkerCount"] = "3",
            ["Myriad:Name"] = "bound-runtime",
        }, services => services.AddMyriad());

        var runtime = host.Services.GetRequiredService<MultiThreadRuntime>();
        Assert.Equal(3, runtime.WorkerCount);
        Assert.Equal("bound-runtime", runtime.Name);
        Assert.Same(runtime, host.Services.GetRequiredService<JobRuntime>());
    }

    [Fact]
    public void AddMyriad_WithMyriadSection_BindsStringTimeSpanAndTuningOptions()
    {
        // The generated binder must cover what the reflection binder did: strings, TimeSpans in
        // configuration's "hh:mm:ss.fff" form, and the tuning integers.
        var logs = new LogCapture();
        using IHost host = TestHost.Build(logs, new Dictionary<string, string?>
        {
            ["Myriad:WorkerCount"] = "2",
            ["Myriad:ThreadNamePrefix"] = "bound worker",
            ["Myriad:LazyWakeDelay"] = "00:00:00.005",
            ["Myriad:IdleSpin"] = "00:00:00",
            ["Myriad:MaxSpareThreads"] = "3",
            ["Myriad:SpawnInlineBacklog"] = "0",
        }, services => services.AddMyriad());

        RuntimeOptions options = host.Services.GetRequiredService<IOptions<RuntimeOptions>>().Value;
        Assert.Equal("bound worker", options.ThreadNamePrefix);
        Assert.Equal(TimeSpan.FromMilliseconds(5), options.LazyWakeDelay);
        Assert.Equal(TimeSpan.Zero, options.IdleSpin);
        Assert.Equal(3, options.MaxSpareThreads);
        Assert.Equal(0, options.SpawnInlineBacklog);
        Assert.Same(TimeProvider.System, options.TimeProvider); // set in code only, never bound
    }

    [Fact]
    public void AddMyriad_BindsWithGeneratedCode_NotReflection()
    {
        // ConfigurationBinder's reflection cannot be followed by NativeAOT or the trimmer: published
        // that way the "Myriad" section would be silently ignored. The binding source generator
        // emits its binder into this assembly, under its own namespace.
        Assert.Contains(typeof(MyriadServiceCollectionExtensions).Assembly.GetTypes(),
            t => t.Namespace == "Microsoft.Extensions.Configuration.Binder.SourceGeneration");
    }

    [Fact]
    public void AddMyriad_WithConfigure_AppliesAfterConfiguration()
    {
        var logs = new LogCapture();
        using IHost host = TestHost.Build(logs, new Dictionary<string, string?> { ["Myriad:WorkerCount"] = "3" },
            services => services.AddMyriad(o => o.WorkerCount = 1));

        Assert.Equal(1, host.Services.GetRequiredService<JobRuntime>().WorkerCount);
    }

    [Fact]
    public void AddMyriad_WithSectionPath_BindsThatSection()
    {
        var logs = new LogCapture();
        using IHost host = TestHost.Build(logs, new Dictionary<string, string?>
        {
            ["Myriad:WorkerCount"] = "3",
            ["Services:Jobs:WorkerCount"] = "2",
        }, services => services.AddMyriad("Services:Jobs"));

        Assert.Equal(2, host.Services.GetRequiredService<JobRuntime>().WorkerCount);
    }

    [Fact]
    public void AddMyriad_CalledTwice_RegistersOneRuntimeAndOneLifetime()
    {
        var logs = new LogCapture();
        using IHost host = TestHost.Build(logs, services => services.AddMyriad().AddMyriad(o => o.Name = "second-call"));

        Assert.Single(host.Services.GetServices<IHostedService>().OfType<MyriadRuntimeLifetime>());
        Assert.Single(host.Services.GetServices<JobRuntime>());
        Assert.Equal("second-call", host.Services.GetRequiredService<JobRuntime>().Name);
    }

    [Fact]
    public void AddMyriad_WithoutConfiguration_UsesDefaultOptions()
    {
        var services = new ServiceCollection();
        services.AddMyriad();
        using ServiceProvider provider = services.BuildServiceProvider();

        Assert.Equal(Environment.ProcessorCount, provider.GetRequiredService<JobRuntime>().WorkerCount);
    }

    [Fact]
    public void AddMyriad_NullArguments_Throw()
    {
        Assert.Throws<ArgumentNullException>(() => MyriadServiceCollectionExtensions.AddMyriad(null!));
        Assert.Throws<ArgumentNullException>(() => new ServiceCollection().AddMyriad((string)null!));
    }
}
