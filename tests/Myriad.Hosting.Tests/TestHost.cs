using System;
using System.Collections.Generic;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Myriad.Hosting.Tests;

/// <summary>Builds small hosts: in-memory configuration, captured logs, no default file or console providers.</summary>
internal static class TestHost
{
    internal static IHost Build(LogCapture logs, Action<IServiceCollection> services) => Build(logs, null, services);

    internal static IHost Build(
        LogCapture logs,
        IDictionary<string, string?>? configuration = null,
        Action<IServiceCollection>? services = null,
        TimeSpan? shutdownTimeout = null)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(configuration ?? new Dictionary<string, string?> { ["Myriad:WorkerCount"] = "2" });
        builder.Logging.AddProvider(logs);
        builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = shutdownTimeout ?? TimeSpan.FromSeconds(30));
        services?.Invoke(builder.Services);
        return builder.Build();
    }
}
