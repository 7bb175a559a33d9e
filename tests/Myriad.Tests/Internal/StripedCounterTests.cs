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
}
