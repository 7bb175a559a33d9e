using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;
using Xunit;

namespace Myriad.Tests.Internal;

public class StripedCounterTests
{
    [Fact]
    public void Increment_FromOneThread_SumCountsEveryIncrement()
    {
        var counter = new StripedCounter();
        for (int i = 0; i < 1000; i++)
        {
            counter.Increment();
        }

        Assert.Equal(1000, counter.Sum());
    }

    [Fact]
    [Trait("Category", "Stress")]
    public void Increment_FromManyThreads_NoIncrementIsLost()
    {
        var counter = new StripedCounter();
        const int threads = 8;
        const int perThread = 250_000;
        Parallel.For(0, threads, new ParallelOptions { MaxDegreeOfParallelism = threads }, _ =>
        {
            for (int i = 0; i < perThread; i++)
            {
                counter.Increment();
            }
        });
        Assert.Equal((long)threads * perThread, counter.Sum());
    }

    [Fact]
    [Trait("Category", "Stress")]
    public void Increment_FromMoreThreadsThanOwnedCells_NoIncrementIsLost()
    {
        // Threads past the owned cells share interlocked ones; each owned cell has one writer.
        var counter = new StripedCounter();
        int threads = MyriadDefaults.CounterOwnedStripes + 16;
        const int perThread = 20_000;
        using var start = new Barrier(threads);
        var workers = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            workers[t] = new Thread(() =>
            {
                PerThread state = PerThread.Current;
                start.SignalAndWait();
                for (int i = 0; i < perThread; i++)
                {
                    counter.Increment(state);
                }
            });
            workers[t].Start();
        }

        foreach (Thread worker in workers)
        {
            worker.Join();
        }

        Assert.Equal((long)threads * perThread, counter.Sum());
    }
}
