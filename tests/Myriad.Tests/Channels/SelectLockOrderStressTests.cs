using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// Select locks its channels in identity-hash-code order, and two channels with equal codes have no
/// order between them (try-lock and back off). Selects that name two such channels in opposite orders,
/// on several workers at once, must neither deadlock nor lose or duplicate an item.
/// </summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class SelectLockOrderStressTests
{
    private const int Producers = 4;
    private const int Consumers = 4;
    private const int ItemsPerProducer = 5_000;

    [Theory]
    [InlineData(0)]
    [InlineData(2)]
    public void SelectsInOppositeOrders_OnChannelsWithEqualKeys_EveryItemOnceNoDeadlock(int capacity)
    {
        (Chan<int> a, Chan<int> b) = HashCollisions.Pair(() => capacity == 0 ? Chan.Unbuffered<int>() : Chan.Bounded<int>(capacity));
        for (int round = 0; round < 3; round++)
        {
            using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 4 });
            var seen = new int[Producers * ItemsPerProducer];
            var remaining = new StrongBox<int>(seen.Length);
            Bounded.Run(runtime, async () =>
            {
                var jobs = new Job[Producers + Consumers];
                for (int p = 0; p < Producers; p++)
                {
                    jobs[p] = runtime.Spawn((a, b, p), static s => Produce(s.a, s.b, s.p));
                }

                for (int c = 0; c < Consumers; c++)
                {
                    jobs[Producers + c] = runtime.Spawn((a, b, c, seen, remaining), static s => Consume(s.a, s.b, s.c, s.seen, s.remaining));
                }

                await Job.WhenAll(jobs);
                return 0;
            });

            Assert.All(seen, count => Assert.Equal(1, count));
        }
    }

    private static async Job Produce(Chan<int> a, Chan<int> b, int producer)
    {
        for (int i = 0; i < ItemsPerProducer; i++)
        {
            int item = (producer * ItemsPerProducer) + i;
            // Half the producers name a first, half b first; some sends are plain.
            if (i % 5 == 0)
            {
                await (producer % 2 == 0 ? a : b).SendAsync(item);
            }
            else if (producer % 2 == 0)
            {
                await Select.Send(a, item).Send(b, item);
            }
            else
            {
                await Select.Send(b, item).Send(a, item);
            }
        }
    }

    private static async Job Consume(Chan<int> a, Chan<int> b, int consumer, int[] seen, StrongBox<int> remaining)
    {
        // Each decrement reserves one of the items still to come, so exactly as many receives run as
        // items are sent, and every one of them completes.
        while (Interlocked.Decrement(ref remaining.Value) >= 0)
        {
            int got = -1;
            SelectBuilder select = (consumer % 3) switch
            {
                0 => Select.Receive(a, v => got = v).Receive(b, v => got = v),
                1 => Select.Receive(b, v => got = v).Receive(a, v => got = v),
                _ => Select.Receive(b, v => got = v).Receive(a, v => got = v).Receive(b, v => got = v),
            };
            await select;
            Interlocked.Increment(ref seen[got]);
        }
    }
}
