using System;
using System.Linq;
using System.Threading;
using System.Threading.Channels;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// The inline receiver's state moves to Free without the channel's lock, on the consuming thread,
/// while other workers' receives and sends read it under the lock. Plain receives on several workers
/// at once (each one taking the inline cell whenever it is free, a pooled waiter otherwise), mixed
/// with cancelable ones, must still deliver every item exactly once.
/// </summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class InlineReceiverStressTests
{
    private const int Receivers = 4;
    private const int Senders = 3;
    private const int ItemsPerSender = 20_000;

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(16)]
    public void PlainReceivesOnManyWorkers_EveryItemOnce(int capacity)
    {
        for (int round = 0; round < 3; round++)
        {
            using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 4 });
            Chan<int> ch = capacity == 0 ? Chan.Unbuffered<int>() : Chan.Bounded<int>(capacity);
            var seen = new int[Senders * ItemsPerSender];
            Bounded.Run(runtime, async () =>
            {
                Job[] receivers = Enumerable.Range(0, Receivers)
                    .Select(i => runtime.Spawn((ch, seen, i), static s => Receive(s.ch, s.seen, cancelable: s.i == 0)))
                    .ToArray();
                Job[] senders = Enumerable.Range(0, Senders)
                    .Select(i => runtime.Spawn((ch, i), static s => Send(s.ch, s.i)))
                    .ToArray();
                await Job.WhenAll(senders);
                ch.Close();
                await Job.WhenAll(receivers);
                return 0;
            });

            Assert.All(seen, count => Assert.Equal(1, count));
        }
    }

    private static async Job Send(Chan<int> ch, int sender)
    {
        for (int i = 0; i < ItemsPerSender; i++)
        {
            await ch.SendAsync((sender * ItemsPerSender) + i);
        }
    }

    private static async Job Receive(Chan<int> ch, int[] seen, bool cancelable)
    {
        using var cts = new CancellationTokenSource();
        CancellationToken token = cancelable ? cts.Token : default;
        while (true)
        {
            int item;
            try
            {
                item = await ch.ReceiveAsync(token);
            }
            catch (ChannelClosedException)
            {
                return;
            }

            Interlocked.Increment(ref seen[item]);
        }
    }
}
