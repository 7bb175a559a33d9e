using System;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Myriad.Scheduling;

namespace Myriad.Hosting;

/// <summary>Registers a Myriad runtime with a host's service collection.</summary>
public static class MyriadServiceCollectionExtensions
{
    /// <summary>The configuration section <see cref="AddMyriad(IServiceCollection, Action{RuntimeOptions}?)"/> binds: <c>"Myriad"</c>.</summary>
    public const string DefaultConfigurationSection = "Myriad";

    /// <summary>
    /// Registers one <see cref="MultiThreadRuntime"/>, also as <see cref="JobRuntime"/>, whose
    /// <see cref="RuntimeOptions"/> are bound from the configuration section <c>"Myriad"</c>
    /// (<c>"Myriad:WorkerCount"</c>, <c>"Myriad:Name"</c>, ...) when the container has an
    /// <see cref="IConfiguration"/>, then passed to <paramref name="configure"/>.
    /// </summary>
    /// <remarks>
    /// <para>The runtime is created (its workers start) when the host starts, before any hosted service
    /// starts, and it is disposed once every hosted service has stopped: queued jobs drain, bounded
    /// by the host's shutdown timeout (<c>HostOptions.ShutdownTimeout</c>).</para>
    /// <para>A host disposed without being stopped (<c>StartAsync</c>, then <c>Dispose</c> without
    /// <c>StopAsync</c>; <c>Run</c> and <c>RunAsync</c> do stop it) leaves the runtime to the
    /// container, which disposes it after the services that use it: the drain then has no time limit,
    /// so no queued job is lost, and a job that never ends (one that keeps requeueing itself, such
    /// as a loop of <c>await Task.Yield()</c>) makes <c>Dispose</c> wait for it. Stop the host
    /// before disposing it, as <c>Run</c> does, to bound the wait.</para>
    /// <para>Failures of detached jobs
    /// (<see cref="JobRuntime.UnobservedException"/>) are logged as errors under the category
    /// <c>Myriad</c>. Calling this more than once registers one runtime; every call's
    /// <paramref name="configure"/> applies. The binding is generated at compile time, so it also
    /// works in a trimmed or NativeAOT application; <see cref="RuntimeOptions.TimeProvider"/> is
    /// not bound (set a clock in <paramref name="configure"/>).</para>
    /// </remarks>
    /// <param name="services">The service collection.</param>
    /// <param name="configure">Changes the options after configuration was bound; null for none.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    public static IServiceCollection AddMyriad(this IServiceCollection services, Action<RuntimeOptions>? configure = null) =>
        services.AddMyriad(DefaultConfigurationSection, configure);

    /// <summary>
    /// <see cref="AddMyriad(IServiceCollection, Action{RuntimeOptions}?)"/> with the options bound
    /// from the configuration section at <paramref name="configurationSectionPath"/>.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="configurationSectionPath">The section's path, such as <c>"Services:Jobs"</c>.</param>
    /// <param name="configure">Changes the options after configuration was bound; null for none.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> or <paramref name="configurationSectionPath"/> is null.</exception>
    public static IServiceCollection AddMyriad(this IServiceCollection services, string configurationSectionPath, Action<RuntimeOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(configurationSectionPath);

        OptionsBuilder<RuntimeOptions> options = services.AddOptions<RuntimeOptions>();
        options.Configure<IServiceProvider>((o, provider) =>
        {
            // Tolerates a container without configuration (a bare ServiceCollection in a test).
            // The binding source generator (see the project file) replaces this call with code
            // generated at compile time, so that NativeAOT and trimming keep the binding.
            provider.GetService<IConfiguration>()?.GetSection(configurationSectionPath).Bind(o);
        });
        if (configure is not null)
        {
            options.Configure(configure);
        }

        services.TryAddSingleton(static provider => CreateRuntime(provider));
        services.TryAddSingleton<JobRuntime>(static provider => provider.GetRequiredService<MultiThreadRuntime>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, MyriadRuntimeLifetime>());
        return services;
    }

    private static MultiThreadRuntime CreateRuntime(IServiceProvider provider)
    {
        RuntimeOptions options = provider.GetRequiredService<IOptions<RuntimeOptions>>().Value;
        ILogger logger = provider.GetService<ILoggerFactory>()?.CreateLogger(MyriadLog.Category) ?? NullLogger.Instance;
        var runtime = new MultiThreadRuntime(options);
        runtime.UnobservedException += (sender, e) => MyriadLog.UnobservedException(logger, ((JobRuntime)sender!).Name, e.Exception);
        return runtime;
    }
}
