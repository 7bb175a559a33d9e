using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// Jobs of a <see cref="DeterministicRuntime"/> that await BCL tasks the run itself completes resume
/// in an order the seed picks, at the virtual time the task completed. The TPL sends all but the
/// first continuation of a task to the thread pool (and a <c>Task.Delay</c> ended by its token
/// continues there too), so these resumes once came back in real-time order; so did the resumes of a
/// BCL channel's operations.
/// </summary>
public sealed class DeterministicTaskAwaitTests
{
    // Each program gave two or three traces in twenty runs of one seed before the fix.
    private const int Runs = 30;

    public static IEnumerable<object[]> Programs() =>
    [
        ["completion-source"],
        ["shared-delay"],
        ["timeouts"],
        ["configure-await-false"],
        ["configure-await-true"],
        ["bcl-channel"],
    ];

    [Theory]
    [MemberData(nameof(Programs))]
    public void Run_TaskAwaitedBySeveralJobs_GivesOneTracePerSeed(string program)
    {
        foreach (ScheduleStrategy strategy in new[] { ScheduleStrategy.Random, ScheduleStrategy.Priority })
        {
            string first = Trace(program, seed: 7, strategy);
            for (int run = 1; run < Runs; run++)
            {
                Assert.Equal(first, Trace(program, seed: 7, strategy));
            }
        }
    }

    [Fact]
    public void Run_TimeoutOnTheVirtualClock_EndsTheTaskDelayAtItsDueTime()
    {
        // Seen a virtual second late when the cancellation's continuation went through the pool:
        // the clock moved on while the resume was in flight.
        string trace = Trace("timeouts", seed: 3, ScheduleStrategy.Random);
        foreach (string entry in trace.Split(' '))
        {
            if (entry.StartsWith("timeout", StringComparison.Ordinal))
            {
                Assert.EndsWith("@1000", entry);
            }
        }

        Assert.Contains("timeout2@1000", trace);
    }

    [Fact]
    public void Run_SeveralSeeds_OrderTheResumesDifferently()
    {
        var traces = new HashSet<string>();
        for (int seed = 0; seed < 20; seed++)
        {
            traces.Add(Trace("completion-source", seed, ScheduleStrategy.Random));
        }

        Assert.True(traces.Count >= 5, $"only {traces.Count} different traces in 20 seeds");
    }

    private static string Trace(string program, int seed, ScheduleStrategy strategy)
    {
        using var runtime = new DeterministicRuntime(seed, strategy);
        var log = new List<string>();
        DateTimeOffset start = runtime.Now;
        string Stamp() => ((long)(runtime.Now - start).TotalMilliseconds).ToString(System.Globalization.CultureInfo.InvariantCulture);

        Bounded.Run(runtime, async () =>
        {
            var waiters = new List<Job>();
            switch (program)
            {
                case "completion-source":
                {
                    var source = new TaskCompletionSource<int>(); // default options: continuations inline
                    for (int i = 0; i < 4; i++)
                    {
                        int id = i;
                        waiters.Add(runtime.Spawn(async () => log.Add($"w{id}:{await source.Task}")));
                    }

                    runtime.SpawnDetached(async () =>
                    {
                        await Task.Yield();
                        source.SetResult(1);
                        log.Add("set");
                    });
                    break;
                }

                case "shared-delay":
                {
                    Task delay = Task.Delay(TimeSpan.FromSeconds(1), runtime.TimeProvider);
                    for (int i = 0; i < 4; i++)
                    {
                        int id = i;
                        waiters.Add(runtime.Spawn(async () =>
                        {
                            await delay;
                            log.Add($"w{id}@{Stamp()}");
                        }));
                    }

                    break;
                }

                case "timeouts":
                {
                    for (int i = 0; i < 3; i++)
                    {
                        int id = i;
                        waiters.Add(runtime.Spawn(async () =>
                        {
                            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(1), runtime.TimeProvider);
                            try
                            {
                                await Task.Delay(TimeSpan.FromHours(1), runtime.TimeProvider, timeout.Token);
                                log.Add($"slept{id}");
                            }
                            catch (OperationCanceledException)
                            {
                                log.Add($"timeout{id}@{Stamp()}");
                            }
                        }));
                    }

                    waiters.Add(runtime.Spawn(async () =>
                    {
                        for (int tick = 0; tick < 4; tick++)
                        {
                            await Job.Delay(TimeSpan.FromMilliseconds(500));
                            log.Add($"tick@{Stamp()}");
                        }
                    }));
                    break;
                }

                case "configure-await-false" or "configure-await-true":
                {
                    bool capture = program == "configure-await-true";
                    var promise = new Promise<int>();
                    Task<int> shared = promise.Job.AsTask();
                    for (int i = 0; i < 4; i++)
                    {
                        int id = i;
                        waiters.Add(runtime.Spawn(async () => log.Add($"w{id}:{await shared.ConfigureAwait(capture)}")));
                    }

                    runtime.SpawnDetached(async () =>
                    {
                        await Task.Yield();
                        promise.SetResult(2);
                        log.Add("set");
                    });
                    break;
                }

                case "bcl-channel":
                {
                    // A BCL channel resumes its waiting readers asynchronously: through the thread
                    // pool unless they captured a context (the job's registration shows Myriad's).
                    var channel = System.Threading.Channels.Channel.CreateBounded<int>(2);
                    for (int i = 0; i < 3; i++)
                    {
                        int id = i;
                        waiters.Add(runtime.Spawn(async () =>
                        {
                            while (await channel.Reader.WaitToReadAsync())
                            {
                                while (channel.Reader.TryRead(out int item))
                                {
                                    log.Add($"r{id}:{item}");
                                    await Job.Yield();
                                }
                            }
                        }));
                    }

                    waiters.Add(runtime.Spawn(async () =>
                    {
                        for (int item = 0; item < 12; item++)
                        {
                            await channel.Writer.WriteAsync(item);
                            log.Add($"w{item}");
                        }

                        channel.Writer.Complete();
                    }));
                    break;
                }

                default:
                    throw new ArgumentOutOfRangeException(nameof(program), program, null);
            }

            await Job.WhenAll(waiters);
        });

        return string.Join(" ", log);
    }
}
