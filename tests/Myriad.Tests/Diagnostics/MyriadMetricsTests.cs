using System;
using System.Collections.Generic;
using System.Linq;
using System.Diagnostics.Metrics;
using Myriad.Channels;
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

    [Fact]
    public void Collection_WhileRuntimesAreConstructed_DoesNotThrow()
    {
        // A runtime is registered as its constructor's last step: a collection running meanwhile
        // must not read a half-built runtime's stats.
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
        listener.SetMeasurementEventCallback<long>(static (_, _, _, _) => { });
        listener.Start();
        var stop = new System.Threading.ManualResetEventSlim();
        var builder = new System.Threading.Thread(() =>
        {
            for (int i = 0; i < 100; i++)
            {
                new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 }).Dispose();
            }

            stop.Set();
        });
        builder.Start();
        while (!stop.IsSet)
        {
            listener.RecordObservableInstruments();
        }

        builder.Join();
    }

    [Fact]
    public void ActiveJobs_WhileJobsAreSpawnedAndFinish_IsNeverNegative()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        long min = long.MaxValue;
        var stop = new System.Threading.ManualResetEventSlim();
        var spawners = new System.Threading.Thread[2];
        for (int i = 0; i < spawners.Length; i++)
        {
            spawners[i] = new System.Threading.Thread(() =>
            {
                while (!stop.IsSet)
                {
                    runtime.SpawnDetached(0, static _ => { });
                }
            });
            spawners[i].Start();
        }

        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (clock.ElapsedMilliseconds < 1000)
        {
            min = System.Math.Min(min, MyriadMetrics.ActiveJobs(runtime));
        }

        stop.Set();
        foreach (System.Threading.Thread spawner in spawners)
        {
            spawner.Join();
        }

        Assert.True(min >= 0, $"myriad.jobs.active read {min}");
    }

    [Fact]
    public void ActiveJobs_AfterJobsFinishAndRuntimeIsDisposed_ReportsZero()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, Name = "active-returns-to-zero" });
        using var gate = new System.Threading.ManualResetEventSlim();
        Job first = runtime.Spawn(gate, static g => g.Wait());
        Job second = runtime.Spawn(gate, static g => g.Wait());

        // Two jobs in flight: the gauge says so.
        Assert.True(SpinUntil(() => Collect("active-returns-to-zero").GetValueOrDefault("myriad.jobs.active") == 2));

        gate.Set();
        first.Wait();
        second.Wait();
        runtime.Dispose();

        // The series does not stop at its last in-flight value: the disposed runtime reports its
        // final values (a tool would otherwise keep showing 2).
        Dictionary<string, long> after = Collect("active-returns-to-zero");
        Assert.Equal(0, after["myriad.jobs.active"]);
        Assert.Equal(2, after["myriad.jobs.spawned"]);
        Assert.Equal(2, after["myriad.jobs.completed"]);
        Assert.Equal(0, after["myriad.scheduler.queue.length"]);
    }

    [Fact]
    public void Retention_Zero_DropsDisposedRuntimeFromMeasurements() => WithZeroRetention(static () =>
    {
        new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = "dropped-at-once" }).Dispose();
        Assert.Empty(Collect("dropped-at-once"));
    });

    /// <summary>Runs <paramref name="body"/> with <see cref="MyriadMetrics.DisposedRuntimeRetention"/> at zero, restored after.</summary>
    private static void WithZeroRetention(Action body) => WithRetention(TimeSpan.Zero, body);

    /// <summary>Runs <paramref name="body"/> with <see cref="MyriadMetrics.DisposedRuntimeRetention"/> at <paramref name="retention"/>, restored after.</summary>
    private static void WithRetention(TimeSpan retention, Action body)
    {
        TimeSpan saved = MyriadMetrics.DisposedRuntimeRetention;
        try
        {
            MyriadMetrics.DisposedRuntimeRetention = retention;
            body();
        }
        finally
        {
            MyriadMetrics.DisposedRuntimeRetention = saved;
        }
    }

    [Fact]
    public void Register_SameNameAsRetiredRuntime_ReportsOneSeriesContinuingItsCounts()
    {
        var retired = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = "reused-name" });
        retired.Spawn(0, static _ => { }).Wait();
        retired.Spawn(0, static _ => { }).Wait();
        retired.Dispose();
        Assert.Equal(2, Collect("reused-name")["myriad.jobs.spawned"]);

        using var live = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = "reused-name" });
        live.Spawn(0, static _ => { }).Wait();

        Assert.Equal(1, CollectAll("reused-name").Count(m => m.Instrument == "myriad.jobs.spawned"));
        Dictionary<string, long> values = Collect("reused-name");
        Assert.Equal(3, values["myriad.jobs.spawned"]); // a counter: it never goes down
        Assert.Equal(3, values["myriad.jobs.completed"]);
        Assert.Equal(0, values["myriad.jobs.active"]);
    }

    [Fact]
    public void Register_SameNameWhileRetiredRuntimeStillHasActiveJobs_SeriesKeepsThemActiveAndCountsTheirCompletions() =>
        WithRetention(TimeSpan.FromHours(1), static () =>
        {
            // A restarted service: the old runtime was disposed with jobs suspended on a channel,
            // and a new runtime of the same name registered before they ended. The old runtime's
            // totals were carried into the name's series at the registration, so its suspended jobs
            // vanished from active, and their completions, after the channel closed, were never
            // counted: completed stayed behind spawned for good.
            const string name = "restarted-with-stuck-jobs";
            Chan<int> stuck = Chan.Unbuffered<int>();
            var old = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = name });
            for (int i = 0; i < 10; i++)
            {
                old.SpawnDetached(stuck, static async c => await c.ReceiveOkAsync());
            }

            Assert.True(SpinUntil(() => old.Stats().QueuedItems == 0 && Collect(name)["myriad.jobs.active"] == 10));
            old.Dispose();
            Assert.Equal(10, Collect(name)["myriad.jobs.active"]);

            using var restarted = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = name });
            Dictionary<string, long> values = Collect(name);
            Assert.Equal(10, values["myriad.jobs.spawned"]);
            Assert.Equal(10, values["myriad.jobs.active"]);
            Assert.Equal(1, CollectAll(name).Count(m => m.Instrument == "myriad.jobs.active"));

            stuck.Close(); // the old runtime's jobs wake after its disposal and end canceled
            Assert.True(SpinUntil(() => old.CompletedCount == 10));
            restarted.Spawn(0, static _ => { }).Wait();
            values = Collect(name);
            Assert.Equal(11, values["myriad.jobs.spawned"]);
            Assert.Equal(11, values["myriad.jobs.completed"]);
            Assert.Equal(0, values["myriad.jobs.active"]);

            // Drained now: the next namesake's registration carries it, and the counters go on.
            using var another = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = name });
            values = Collect(name);
            Assert.Equal(11, values["myriad.jobs.spawned"]);
            Assert.Equal(11, values["myriad.jobs.completed"]);
        });

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Register_SameNameAfterRetentionPassed_StartsNewSeriesWhetherOrNotAnotherRuntimeRegisteredMeanwhile(bool otherRuntimeMeanwhile) =>
        WithRetention(TimeSpan.FromMilliseconds(100), () =>
        {
            // The retention ended the disposed runtime's series (a collection then would not have
            // seen the name): a namesake registered later starts a new series at 0. It used to carry
            // the disposed runtime's totals on unless some unrelated runtime had registered (or been
            // disposed) in between, which pruned the expired entry without carrying it.
            string name = "expired-name-" + otherRuntimeMeanwhile;
            using (var first = new CurrentThreadRuntime(name))
            {
                first.SpawnDetached(0, static _ => { });
                first.SpawnDetached(0, static _ => { });
                first.RunUntilIdle();
            }

            System.Threading.Thread.Sleep(300);
            if (otherRuntimeMeanwhile)
            {
                new CurrentThreadRuntime("unrelated-to-" + name).Dispose();
            }

            using var second = new CurrentThreadRuntime(name);
            Dictionary<string, long> values = Collect(name);
            Assert.Equal(0, values["myriad.jobs.spawned"]);
            Assert.Equal(0, values["myriad.jobs.completed"]);
        });

    [Fact]
    public void CreateAndDispose_WithThousandsOfRetiredRuntimes_VisitsFewEntriesPerRuntime() => WithRetention(TimeSpan.FromHours(1), static () =>
    {
        // Every disposed runtime stays retired for the retention, and default names are unique, so
        // a process that creates runtimes in a loop holds thousands of entries. A registration and a
        // disposal used to look at every one of them (expiry, freezing, namesakes, names in use):
        // creating runtimes got quadratically slower (20,000 deterministic runtimes: 1 s for the
        // first 5,000, 3 s for the last). Counted work, not time: it must not grow with the entries.
        const int Retired = 2_000;
        for (int i = 0; i < Retired; i++)
        {
            new CurrentThreadRuntime().Dispose();
        }

        const int Measured = 100;
        long before = RetiredRuntimes.VisitedOnThisThread;
        for (int i = 0; i < Measured; i++)
        {
            new CurrentThreadRuntime().Dispose();
        }

        long perRuntime = (RetiredRuntimes.VisitedOnThisThread - before) / Measured;
        Assert.True(perRuntime <= 32, $"a create and dispose looked at {perRuntime} retired entries, live runtimes or names, with {Retired}+ runtimes retired");
    });

    [Fact]
    public void Retention_ShortenedAtRunTime_AppliesToRuntimesDisposedBefore() => WithRetention(TimeSpan.FromHours(1), static () =>
    {
        // Retired runtimes expire oldest first, from the front of their list: the retention applies
        // to every one as it is when the list is refreshed, so that order holds whatever it is set
        // to later. (Other tests' runtimes may refresh the list at any time here.)
        new CurrentThreadRuntime("retention-shortened-early").Dispose();
        System.Threading.Thread.Sleep(1500);
        new CurrentThreadRuntime("retention-shortened-late").Dispose();
        Assert.NotEmpty(Collect("retention-shortened-early"));

        MyriadMetrics.DisposedRuntimeRetention = TimeSpan.FromSeconds(1);
        Assert.Empty(Collect("retention-shortened-early")); // disposed over 1.5 s ago
        Assert.NotEmpty(Collect("retention-shortened-late")); // disposed just now
        System.Threading.Thread.Sleep(1500);
        Assert.Empty(Collect("retention-shortened-late"));
    });

    [Fact]
    public void Dispose_WhileAJobWaitsOnATask_TheRuntimeIsReleasedByLaterRuntimesOnceTheJobEnds() => WithRetention(TimeSpan.FromHours(1), static () =>
    {
        // The disposal completes while the job still waits (it counts as active until woken): the
        // retired entry keeps reading the runtime. Once the job ended, a registration or disposal
        // freezes the entry without anything collecting, as the end of a disposal does for a drained
        // runtime, so that the runtime is not kept reachable for the retention.
        var release = new System.Threading.Tasks.TaskCompletionSource(System.Threading.Tasks.TaskCreationOptions.RunContinuationsAsynchronously);
        WeakReference disposed = DisposeWhileWaiting(release.Task);
        release.SetResult();
        Assert.True(SpinUntil(() =>
        {
            for (int i = 0; i < 10; i++)
            {
                new CurrentThreadRuntime().Dispose(); // each checks a few of the entries still draining
            }

            GC.Collect();
            GC.WaitForPendingFinalizers();
            return !disposed.IsAlive;
        }), "the disposed runtime is still reachable after its job ended");
    });

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static WeakReference DisposeWhileWaiting(System.Threading.Tasks.Task task)
    {
        var runtime = new CurrentThreadRuntime("disposed-while-waiting");
        runtime.SpawnDetached(task, static async t => await t);
        runtime.RunUntilIdle();
        runtime.Dispose();
        Assert.Equal(1, Collect("disposed-while-waiting")["myriad.jobs.active"]);
        return new WeakReference(runtime);
    }

    [Fact]
    public void Dispose_OneOfTwoNamesakes_CountersKeepItsTotalsAfterItsRetentionUntilTheSeriesEnds() => WithZeroRetention(static () =>
    {
        // Observable counters must never decrease: the series of the name dropped by the disposed
        // runtime's totals once its retention ended, while its namesake lived on.
        var first = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = "outlived-name" });
        var second = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = "outlived-name" });
        for (int i = 0; i < 3; i++)
        {
            first.Spawn(i, static _ => { }).Wait();
        }

        for (int i = 0; i < 4; i++)
        {
            second.Spawn(i, static _ => { }).Wait();
        }

        first.Dispose();
        for (int collection = 0; collection < 2; collection++)
        {
            Dictionary<string, long> values = Collect("outlived-name");
            Assert.Equal(7, values["myriad.jobs.spawned"]);
            Assert.Equal(7, values["myriad.jobs.completed"]);
            Assert.Equal(0, values["myriad.jobs.active"]);
        }

        second.Spawn(0, static _ => { }).Wait();
        Assert.Equal(8, Collect("outlived-name")["myriad.jobs.spawned"]);

        second.Dispose();
        Assert.Empty(Collect("outlived-name")); // the last runtime of the name left: the series ended

        using var later = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = "outlived-name" });
        Assert.Equal(0, Collect("outlived-name")["myriad.jobs.spawned"]); // a new series
    });

    [Fact]
    public void Collect_TwoLiveRuntimesWithOneName_ReportsOneSummedSeries()
    {
        // Two measurements with one tag set in a collection overwrite each other in the tools (the
        // last one wins in a MeterListener, dotnet-counters and OpenTelemetry's observable handling).
        using var first = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = "shared-name" });
        using var second = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, Name = "shared-name" });
        for (int i = 0; i < 3; i++)
        {
            first.Spawn(i, static _ => { }).Wait();
        }

        for (int i = 0; i < 4; i++)
        {
            second.Spawn(i, static _ => { }).Wait();
        }

        List<(string Instrument, long Value)> spawned = CollectAll("shared-name").Where(m => m.Instrument == "myriad.jobs.spawned").ToList();
        Assert.Single(spawned);
        Assert.Equal(7, spawned[0].Value);
        Assert.Equal(7, Assert.Single(CollectAll("shared-name"), m => m.Instrument == "myriad.jobs.completed").Value);
    }

    [Fact]
    public void Instruments_CumulativeCountsAreCountersAndCurrentCountsUpDownCounters()
    {
        // OpenTelemetry's conventions: additive current values (Myriad sums them over the runtimes of
        // a name) are up-down counters, as dotnet.thread_pool.queue.length is, not gauges. Names and
        // units are part of the compatibility surface and must not change.
        Dictionary<string, Instrument> published = PublishedInstruments();
        var expected = new (string Name, Type Kind, string Unit)[]
        {
            ("myriad.jobs.spawned", typeof(ObservableCounter<long>), "{job}"),
            ("myriad.jobs.completed", typeof(ObservableCounter<long>), "{job}"),
            ("myriad.jobs.active", typeof(ObservableUpDownCounter<long>), "{job}"),
            ("myriad.jobs.unobserved_exceptions", typeof(ObservableCounter<long>), "{exception}"),
            ("myriad.scheduler.queue.length", typeof(ObservableUpDownCounter<long>), "{item}"),
            ("myriad.scheduler.workers.parked", typeof(ObservableUpDownCounter<long>), "{worker}"),
            ("myriad.scheduler.workers.searching", typeof(ObservableUpDownCounter<long>), "{worker}"),
            ("myriad.scheduler.steals", typeof(ObservableCounter<long>), "{steal}"),
            ("myriad.scheduler.parks", typeof(ObservableCounter<long>), "{park}"),
        };

        Assert.Equal(expected.Select(e => e.Name).Order(), published.Keys.Order());
        foreach ((string name, Type kind, string unit) in expected)
        {
            Assert.True(published[name].GetType() == kind, $"{name} is a {published[name].GetType().Name}, expected {kind.Name}");
            Assert.Equal(unit, published[name].Unit);
        }
    }

    [Fact]
    public void Instruments_DescriptionsReadLikeDotNets()
    {
        foreach (Instrument instrument in PublishedInstruments().Values)
        {
            Assert.StartsWith("The number of ", instrument.Description);
            Assert.EndsWith(".", instrument.Description);
        }

        // Not only detached jobs: WhenAny losers and a scope's unawaited failures count too (each
        // raised as JobRuntime.UnobservedException).
        string unobserved = PublishedInstruments()["myriad.jobs.unobserved_exceptions"].Description!;
        Assert.Contains("UnobservedException", unobserved);
        Assert.Contains("detached", unobserved);
        Assert.Contains("WhenAny", unobserved);
        Assert.Contains("scope", unobserved);
    }

    /// <summary>Every instrument of the Myriad meter, by name.</summary>
    private static Dictionary<string, Instrument> PublishedInstruments()
    {
        _ = MyriadMetrics.DisposedRuntimeRetention; // runs the static constructor, which creates the instruments
        var published = new Dictionary<string, Instrument>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, _) =>
            {
                if (instrument.Meter.Name == MyriadMetrics.MeterName)
                {
                    published[instrument.Name] = instrument;
                }
            },
        };
        listener.Start(); // reports the instruments already published
        return published;
    }

    [Fact]
    public void DisposedRuntimeRetention_Negative_Throws() =>
        Assert.Throws<ArgumentOutOfRangeException>(() => MyriadMetrics.DisposedRuntimeRetention = TimeSpan.FromSeconds(-1));

    private static bool SpinUntil(Func<bool> condition) => System.Threading.SpinWait.SpinUntil(condition, TimeSpan.FromSeconds(30));

    /// <summary>One collection of every Myriad instrument: the last value per instrument for the runtime named <paramref name="runtimeName"/>.</summary>
    private static Dictionary<string, long> Collect(string runtimeName)
    {
        var values = new Dictionary<string, long>();
        foreach ((string instrument, long value) in CollectAll(runtimeName))
        {
            values[instrument] = value;
        }

        return values;
    }

    private static List<(string Instrument, long Value)> CollectAll(string runtimeName)
    {
        var seen = new List<(string, long)>();
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
                if (tag.Key == "myriad.runtime" && (string?)tag.Value == runtimeName)
                {
                    seen.Add((instrument.Name, value));
                }
            }
        });
        listener.Start();
        listener.RecordObservableInstruments();
        return seen;
    }
}
