using System;
using System.Threading;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Myriad;
using Myriad.Channels;
using Myriad.Hosting;
using Myriad.Scheduling;

// A hosted service whose body is an async Job on a Myriad runtime configured from appsettings.json
// ("Myriad" section). It runs a producer/consumer pipeline over a bounded channel, checks the
// result, and stops the application: the host then drains and disposes the runtime and the
// process exits (code 1 if the result was wrong).
HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings
{
    Args = args,
    ContentRootPath = AppContext.BaseDirectory,
});
builder.Services.AddMyriad();
builder.Services.AddHostedService<PipelineService>();
using IHost host = builder.Build();
host.Run();
return Environment.ExitCode;

/// <summary>Squares 100,000 numbers across 8 spawned consumers and sums the squares.</summary>
internal sealed class PipelineService(JobRuntime runtime, IHostApplicationLifetime lifetime, ILogger<PipelineService> logger)
    : JobBackgroundService(runtime)
{
    private const int Items = 100_000;
    private const int Consumers = 8;

    protected override async Job ExecuteJobAsync(CancellationToken stoppingToken)
    {
        try
        {
            Chan<long> work = Chan.Bounded<long>(64);
            var consumers = new Job<long>[Consumers];
            for (int i = 0; i < consumers.Length; i++)
            {
                consumers[i] = Runtime.Spawn(work, static async input =>
                {
                    long sum = 0;
                    await foreach (long n in input.ReadAllAsync())
                    {
                        sum += n * n;
                    }

                    return sum;
                }, stoppingToken);
            }

            for (long n = 1; n <= Items; n++)
            {
                await work.SendAsync(n, stoppingToken);
            }

            work.Close();
            long total = 0;
            foreach (Job<long> consumer in consumers)
            {
                total += await consumer;
            }

            const long expected = (long)Items * (Items + 1) * (2 * Items + 1) / 6;
            logger.LogInformation("Sum of squares 1..{Items} over {Consumers} jobs on {Workers} workers of {Runtime}: {Total} (expected {Expected})",
                Items, Consumers, Runtime.WorkerCount, Runtime.Name, total, expected);
            if (total != expected)
            {
                Environment.ExitCode = 1;
            }
        }
        finally
        {
            lifetime.StopApplication();
        }
    }
}
