using System;
using System.Threading;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Coordination;

/// <summary>
/// <see cref="JobSemaphore.WaitAsync(TimeSpan, CancellationToken)"/> under contention: its timer
/// cancels the wait's token source while releases hand permits to the same waits, on both cores.
/// The limit must hold, no permit may be lost or invented, and the source must never be canceled
/// after its disposal (a work item that threw would end the process).
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public sealed class SemaphoreTimeoutStressTests
{
    private const int Permits = 2;
    private const int Workers = 6;
    private const int Rounds = 500;

    [Fact]
    public void WaitAsyncWithTimeout_RacingReleases_LimitHoldsAndEveryPermitComesBack()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var semaphore = new JobSemaphore(Permits, Permits);
        var counts = new int[4]; // inside, most inside at once, permits taken, timeouts
        Bounded.Run(runtime, async () =>
        {
            var workers = new Job[Workers];
            for (int w = 0; w < Workers; w++)
            {
                workers[w] = runtime.Spawn((semaphore, counts), static async s =>
                {
                    for (int i = 0; i < Rounds; i++)
                    {
                        if (!await s.semaphore.WaitAsync(TimeSpan.FromMilliseconds(1)))
                        {
                            Interlocked.Increment(ref s.counts[3]);
                            continue;
                        }

                        int inside = Interlocked.Increment(ref s.counts[0]);
                        Tally.RaiseTo(ref s.counts[1], inside);
                        Interlocked.Increment(ref s.counts[2]);
                        await (i % 2 == 0 ? Job.Delay(1) : Job.CompletedJob); // held long enough for others to time out
                        Interlocked.Decrement(ref s.counts[0]);
                        s.semaphore.Release();
                    }
                });
            }

            await Job.WhenAll(workers);
        }, TimeSpan.FromMinutes(2));

        Assert.True(counts[1] <= Permits, $"{counts[1]} holders at once");
        Assert.True(counts[2] > 0, "no wait ever got a permit");
        Assert.True(counts[3] > 0, "no wait ever timed out");
        Assert.Equal(Permits, semaphore.CurrentCount);
    }
}
