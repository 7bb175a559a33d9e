using System;
using System.Threading;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Coordination;

/// <summary>
/// Mutex, semaphore and wait group under many jobs on two workers, with waits canceled at random:
/// mutual exclusion holds, no permit or hand-off is lost (everything finishes and the primitives end
/// idle), and a canceled wait never holds anything.
/// </summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class CoordinationStressTests
{
    private const int Jobs = 16;
    private const int Iterations = 3_000;

    private sealed class State
    {
        public readonly JobMutex Mutex = new();
        public readonly JobSemaphore Semaphore = new(2);
        public long Counter;
        public int Inside;
        public int Violations;
        public int Canceled;
    }

    [Fact]
    public void Mutex_RandomlyCanceledWaits_KeepExclusionAndLoseNoHandOff()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var state = new State();
        long acquired = Bounded.Run(runtime, async () =>
        {
            var jobs = new Job<long>[Jobs];
            for (int j = 0; j < Jobs; j++)
            {
                jobs[j] = runtime.Spawn((state, seed: j), static async s =>
                {
                    var random = new Random(s.seed);
                    long mine = 0;
                    for (int i = 0; i < Iterations; i++)
                    {
                        using var cts = new CancellationTokenSource();
                        Job<JobMutex.Releaser> wait = s.state.Mutex.LockAsync(random.Next(4) == 0 ? cts.Token : default);
                        if (random.Next(8) == 0)
                        {
                            cts.Cancel();
                        }

                        JobMutex.Releaser releaser;
                        try
                        {
                            releaser = await wait;
                        }
                        catch (OperationCanceledException)
                        {
                            Interlocked.Increment(ref s.state.Canceled);
                            continue;
                        }

                        using (releaser)
                        {
                            if (Interlocked.Increment(ref s.state.Inside) != 1)
                            {
                                Interlocked.Increment(ref s.state.Violations);
                            }

                            s.state.Counter++;
                            mine++;
                            if (random.Next(64) == 0)
                            {
                                await Job.Delay(1); // suspend while holding: others queue, some cancel
                            }

                            Interlocked.Decrement(ref s.state.Inside);
                        }
                    }

                    return mine;
                });
            }

            long total = 0;
            foreach (long n in await Job.WhenAll(jobs))
            {
                total += n;
            }

            return total;
        });

        Assert.Equal(0, state.Violations);
        Assert.Equal(acquired, state.Counter);
        Assert.Equal((long)Jobs * Iterations, acquired + state.Canceled);
        Assert.False(state.Mutex.IsLocked);
    }

    [Fact]
    public void Semaphore_RandomlyCanceledWaits_NeverExceedPermitsAndEndFull()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var state = new State();
        Bounded.Run(runtime, async () =>
        {
            var jobs = new Job[Jobs];
            for (int j = 0; j < Jobs; j++)
            {
                jobs[j] = runtime.Spawn((state, seed: j + 50), static async s =>
                {
                    var random = new Random(s.seed);
                    for (int i = 0; i < Iterations; i++)
                    {
                        using var cts = new CancellationTokenSource();
                        Job<JobSemaphore.Releaser> wait = s.state.Semaphore.AcquireAsync(cts.Token);
                        if (random.Next(6) == 0)
                        {
                            cts.Cancel();
                        }

                        try
                        {
                            using (await wait)
                            {
                                if (Interlocked.Increment(ref s.state.Inside) > 2)
                                {
                                    Interlocked.Increment(ref s.state.Violations);
                                }

                                if (random.Next(32) == 0)
                                {
                                    await Job.Delay(1); // suspend while holding: others queue, some cancel
                                }

                                Interlocked.Decrement(ref s.state.Inside);
                            }
                        }
                        catch (OperationCanceledException)
                        {
                        }
                    }
                });
            }

            await Job.WhenAll(jobs);
        });

        Assert.Equal(0, state.Violations);
        Assert.Equal(2, state.Semaphore.CurrentCount);
    }

    [Fact]
    public void WaitGroup_ManyRoundsOfWorkersAndWaiters_EveryWaiterReleased()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        int released = 0;
        Bounded.Run(runtime, async () =>
        {
            for (int round = 0; round < 300; round++)
            {
                var group = new WaitGroup();
                group.Add(8);
                var waiters = new Job[8];
                for (int w = 0; w < waiters.Length; w++)
                {
                    waiters[w] = runtime.Spawn(group, static g => g.WaitAsync());
                }

                for (int d = 0; d < 8; d++)
                {
                    runtime.SpawnDetached(group, static g => g.Done());
                }

                await Job.WhenAll(waiters);
                Assert.Equal(0, group.Count);
                released += waiters.Length;
            }
        });

        Assert.Equal(300 * 8, released);
    }
}
