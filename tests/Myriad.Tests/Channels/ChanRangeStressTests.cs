using System;
using System.Threading;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// The worker-pool shape under load: P producers and C consumers over one channel, consumers
/// enumerating with <c>await foreach</c> over <see cref="Chan{T}.ReadAllAsync"/> (the
/// <see cref="ChanRange{T}"/> cell protocol), producers sending with <c>SendAsync</c> (on a buffered
/// channel the wake of a counterpart goes to the worker's run-next slot, see Chan{T}.Wake.cs). Checks
/// conservation (the checked sum and count of what the consumers saw), that every consumer ends at the
/// close, and that nothing hangs (a lost wake-up would hang the run, which <see cref="Bounded"/> turns
/// into a failure).
/// </summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class ChanRangeStressTests
{
    private const int Rounds = 4;

    [Theory]
    [InlineData(4, 4, 1024, "multi")]
    [InlineData(1, 8, 1024, "multi")]
    [InlineData(4, 4, 1, "multi")]
    [InlineData(4, 4, 0, "multi")]
    [InlineData(1, 8, 0, "multi")]
    [InlineData(8, 1, 16, "multi")]
    [InlineData(4, 4, 16, "current")]
    [InlineData(3, 3, 4, "deterministic:7")]
    public void WorkerPool_ReadAllAsync_EveryItemSeenOnce(int producers, int consumers, int capacity, string runtimeKind)
    {
        for (int round = 0; round < Rounds; round++)
        {
            using JobRuntime runtime = Runtimes.Create(runtimeKind);
            long n = runtime is MultiThreadRuntime ? 200_000 : 20_000;
            (long sum, long count) = Bounded.Run(runtime, () => Pool(runtime, n, producers, consumers, capacity, default));
            Assert.Equal(n, count);
            Assert.Equal(n * (n - 1) / 2, sum);
        }
    }

    /// <summary>
    /// Consumers enumerate with a token that fires while the pool runs: each consumer ends with
    /// <see cref="OperationCanceledException"/> or at the close, and no item is lost to a cancellation:
    /// what the consumers did not take is still in the channel, where a final drain finds it.
    /// </summary>
    [Theory]
    [InlineData(1024)]
    [InlineData(0)]
    [InlineData(3)]
    public void WorkerPool_ConsumersCanceledMidway_NoItemLost(int capacity)
    {
        for (int round = 0; round < Rounds; round++)
        {
            using JobRuntime runtime = Runtimes.Create("multi");
            const long N = 100_000;
            Chan<long> channel = capacity == 0 ? Chan.Unbuffered<long>() : Chan.Bounded<long>(capacity);
            using var cts = new CancellationTokenSource();
            long taken = 0;
            long takenSum = 0;
            Bounded.Run(runtime, async () =>
            {
                var consumers = new Job[4];
                for (int k = 0; k < consumers.Length; k++)
                {
                    consumers[k] = runtime.Spawn(async () =>
                    {
                        long mine = 0, mineSum = 0;
                        try
                        {
                            await foreach (long item in channel.ReadAllAsync(cts.Token))
                            {
                                mine++;
                                mineSum += item;
                                if (Interlocked.Read(ref taken) + mine > N / 3)
                                {
                                    cts.Cancel();
                                }
                            }
                        }
                        catch (OperationCanceledException)
                        {
                        }

                        Interlocked.Add(ref taken, mine);
                        Interlocked.Add(ref takenSum, mineSum);
                    });
                }

                // The producer sends everything; once the consumers stop, a drainer takes the rest.
                Job producer = runtime.Spawn(async () =>
                {
                    for (long i = 0; i < N; i++)
                    {
                        await channel.SendAsync(i);
                    }

                    channel.Close();
                });
                foreach (Job consumer in consumers)
                {
                    await consumer;
                }

                long rest = 0, restSum = 0;
                await foreach (long item in channel.ReadAllAsync())
                {
                    rest++;
                    restSum += item;
                }

                await producer;
                Interlocked.Add(ref taken, rest);
                Interlocked.Add(ref takenSum, restSum);
            });
            Assert.Equal(N, taken);
            Assert.Equal(N * (N - 1) / 2, takenSum);
        }
    }

    private static async Job<(long Sum, long Count)> Pool(JobRuntime runtime, long n, int producers, int consumers, int capacity, CancellationToken token)
    {
        Chan<long> channel = capacity == 0 ? Chan.Unbuffered<long>() : Chan.Bounded<long>(capacity);
        var senders = new Job[producers];
        for (int p = 0; p < producers; p++)
        {
            long first = p;
            senders[p] = runtime.Spawn(async () =>
            {
                for (long i = first; i < n; i += producers)
                {
                    await channel.SendAsync(i, token);
                }
            });
        }

        var receivers = new Job<(long, long)>[consumers];
        for (int k = 0; k < consumers; k++)
        {
            receivers[k] = runtime.Spawn(async () =>
            {
                long sum = 0, count = 0;
                await foreach (long item in channel.ReadAllAsync(token))
                {
                    sum += item;
                    count++;
                }

                return (sum, count);
            });
        }

        foreach (Job sender in senders)
        {
            await sender;
        }

        channel.Close();
        long total = 0, items = 0;
        foreach (Job<(long, long)> receiver in receivers)
        {
            (long sum, long count) = await receiver;
            total += sum;
            items += count;
        }

        return (total, items);
    }
}
