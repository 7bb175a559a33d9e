using System;
using System.Threading;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// <see cref="Job{T}.WaitAsync(TimeSpan, CancellationToken)"/>'s race: the job, the timer and the
/// caller's token complete one promise from different threads at about the same time. Every wait must
/// end once, with the job's result, a <see cref="TimeoutException"/> or the cancellation; the token
/// source the race shares must be disposed only after its last use (a cancel on a disposed source
/// would fail an observer, and that failure would end the process).
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public sealed class WaitAsyncStressTests
{
    private const int Waits = 20_000;

    [Fact]
    public void WaitAsync_JobTimerAndTokenRacing_EachWaitEndsOnceWithOneOutcome()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        int failures = 0;
        runtime.UnobservedException += (_, _) => Interlocked.Increment(ref failures);

        (int results, int timeouts, int cancels) = Bounded.Run(runtime, async () =>
        {
            int results = 0, timeouts = 0, cancels = 0;
            var waits = new Job<int>[Waits];
            var sources = new CancellationTokenSource[Waits];
            for (int i = 0; i < Waits; i++)
            {
                sources[i] = new CancellationTokenSource();
                bool sure = i % 4 == 1; // a wait the job must win: no token, a timeout far beyond the job
                CancellationToken token = !sure && (i % 3) == 0 ? sources[i].Token : default;
                Job<int> work = runtime.Spawn(i, static async i =>
                {
                    await Job.Delay(i % 2); // 0 or 1 ms: about when the 1 ms timer fires
                    return i;
                });
                waits[i] = work.WaitAsync(sure ? TimeSpan.FromMinutes(1) : TimeSpan.FromMilliseconds(1), token);
                runtime.SpawnDetached(sources[i], static s => s.Cancel());
            }

            for (int i = 0; i < Waits; i++)
            {
                try
                {
                    Assert.Equal(i, await waits[i]);
                    results++;
                }
                catch (TimeoutException)
                {
                    timeouts++;
                }
                catch (OperationCanceledException)
                {
                    cancels++;
                }

                sources[i].Dispose();
            }

            return (results, timeouts, cancels);
        }, TimeSpan.FromMinutes(2));

        Assert.Equal(Waits, results + timeouts + cancels);
        Assert.True(results >= Waits / 4, $"only {results} jobs won their race");
        Assert.Equal(0, failures); // the jobs never fail, so nothing may be reported
    }
}
