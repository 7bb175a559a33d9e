using System.Collections.Generic;
using System.Diagnostics.Metrics;
using Myriad.Diagnostics;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Diagnostics;

public class MyriadMetricsTests
{
    [Fact]
    public void Meter_ReportsSpawnedAndCompletedPerRuntime()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, Name = "metrics-test" });
        for (int i = 0; i < 25; i++)
        {
            runtime.Spawn(i, static _ => { }).Wait();
        }

        var seen = new Dictionary<string, long>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == MyriadMetrics.MeterName)
                {
                    l.EnableMeasurementEvents(instrument);
                }
            },
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                if (tag.Key == "myriad.runtime" && (string?)tag.Value == "metrics-test")
                {
                    seen[instrument.Name] = value;
                }
            }
        });
        listener.Start();
        listener.RecordObservableInstruments();

        Assert.Equal(25, seen["myriad.jobs.spawned"]);
        Assert.Equal(25, seen["myriad.jobs.completed"]);
        Assert.Equal(0, seen["myriad.jobs.active"]);
        Assert.True(seen.ContainsKey("myriad.scheduler.workers.parked"));
        Assert.True(seen.ContainsKey("myriad.scheduler.queue.length"));
        Assert.Equal("metrics-test", runtime.Name);
    }

    [Fact]
    public void Stats_OfSingleThreadRuntime_CountsQueuedJobs()
    {
        using var runtime = new CurrentThreadRuntime("single");
        runtime.SpawnDetached(0, static _ => { });
        Assert.Equal(1, runtime.Stats().QueuedItems);
        runtime.RunUntilIdle();
        Assert.Equal(0, runtime.Stats().QueuedItems);
    }
}
