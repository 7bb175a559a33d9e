using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Channels;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// Many producers and consumers over shared channels, each operation picked at random among plain,
/// non-blocking, cancelable and select forms (with timeouts and defaults), with channels closed at the
/// end or while busy. Every run checks conservation: the multiset of items received equals the
/// multiset of items whose send was acknowledged (a send that was canceled, timed out, defaulted or
/// failed on a closed channel must deliver nothing), and that nothing hangs.
/// </summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class ChanStressTests
{
    private const int ChannelCount = 3;

    /// <summary>Rounds per test, each with fresh seeds (and, for the deterministic runtime, a fresh schedule).</summary>
    private const int Rounds = 5;

    public static IEnumerable<object[]> Cases() =>
        from capacity in new[] { 0, 1, 16, int.MaxValue }
        from runtime in new[] { "multi", "deterministic" }
        select new object[] { capacity, runtime };

    private static JobRuntime CreateRuntime(string kind, int round) =>
        Runtimes.Create(kind == "deterministic" ? $"deterministic:{round}" : kind);

    [Theory]
    [MemberData(nameof(Cases))]
    public void MixedOperations_ClosedWhenProducersFinish_ConserveItems(int capacity, string runtimeKind)
    {
        for (int round = 0; round < Rounds; round++)
        {
            ClosedWhenProducersFinish(capacity, runtimeKind, round);
        }
    }

    private static void ClosedWhenProducersFinish(int capacity, string runtimeKind, int round)
    {
        using JobRuntime runtime = CreateRuntime(runtimeKind, round);
        int perProducer = runtime is DeterministicRuntime ? 1_500 : 6_000;
        Chan<int>[] chans = CreateChannels(capacity);
        (List<int> acked, List<int> received) = Bounded.Run(runtime, async () =>
        {
            Job<List<int>>[] producers = SpawnProducers(runtime, chans, perProducer, seed: (capacity % 1000) + (round * 7));
            Job<List<int>>[] consumers = SpawnConsumers(runtime, chans, seed: (capacity % 1000) + (round * 7));
            List<int>[] sent = await Job.WhenAll(producers);
            foreach (Chan<int> ch in chans)
            {
                ch.Close();
            }

            List<int>[] got = await Job.WhenAll(consumers);
            return (sent.SelectMany(x => x).ToList(), got.SelectMany(x => x).ToList());
        }, TimeSpan.FromSeconds(60));

        AssertConserved(acked, received);
        Assert.True(acked.Count > perProducer, "most sends should succeed");
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void MixedOperations_ClosedWhileBusy_ConserveItems(int capacity, string runtimeKind)
    {
        for (int round = 0; round < Rounds; round++)
        {
            ClosedWhileBusy(capacity, runtimeKind, round);
        }
    }

    private static void ClosedWhileBusy(int capacity, string runtimeKind, int round)
    {
        using JobRuntime runtime = CreateRuntime(runtimeKind, round);
        int perProducer = runtime is DeterministicRuntime ? 1_500 : 6_000;
        Chan<int>[] chans = CreateChannels(capacity);
        (List<int> acked, List<int> received) = Bounded.Run(runtime, async () =>
        {
            Job<List<int>>[] producers = SpawnProducers(runtime, chans, perProducer, seed: (capacity % 1000) + (round * 7) + 1);
            Job<List<int>>[] consumers = SpawnConsumers(runtime, chans, seed: (capacity % 1000) + (round * 7) + 1);
            Job closer = runtime.Spawn(chans, static async c =>
            {
                // Close the channels one by one while producers and consumers are busy with them.
                foreach (Chan<int> ch in c)
                {
                    await Job.Delay(40);
                    ch.Close();
                }
            });
            List<int>[] sent = await Job.WhenAll(producers);
            await closer;
            List<int>[] got = await Job.WhenAll(consumers);
            return (sent.SelectMany(x => x).ToList(), got.SelectMany(x => x).ToList());
        }, TimeSpan.FromSeconds(60));

        AssertConserved(acked, received);
    }

    [Fact]
    public void Close_RacingWithWaitingReceiversAndSenders_EveryWaiterFinishes()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        for (int round = 0; round < 200; round++)
        {
            Chan<int> ch = Chan.Unbuffered<int>();
            (int receivedCount, int ackedCount) = Bounded.Run(runtime, async () =>
            {
                var receivers = new Job<ReceiveResult<int>>[50];
                var senders = new Job<bool>[50];
                for (int i = 0; i < receivers.Length; i++)
                {
                    receivers[i] = runtime.Spawn(ch, static c => c.ReceiveOkAsync());
                    senders[i] = runtime.Spawn((ch, i), static async s =>
                    {
                        try
                        {
                            await s.ch.SendAsync(s.i);
                            return true;
                        }
                        catch (ChannelClosedException)
                        {
                            return false;
                        }
                    });
                }

                ch.Close(); // races with the hand-offs on the other worker
                ReceiveResult<int>[] got = await Job.WhenAll(receivers);
                bool[] acked = await Job.WhenAll(senders);
                return (got.Count(r => r.Ok), acked.Count(a => a));
            });

            Assert.Equal(ackedCount, receivedCount);
        }
    }

    private static Chan<int>[] CreateChannels(int capacity)
    {
        var chans = new Chan<int>[ChannelCount];
        for (int i = 0; i < chans.Length; i++)
        {
            chans[i] = capacity == int.MaxValue ? Chan.Unbounded<int>() : Chan.Bounded<int>(capacity);
        }

        return chans;
    }

    private static Job<List<int>>[] SpawnProducers(JobRuntime runtime, Chan<int>[] chans, int perProducer, int seed)
    {
        var producers = new Job<List<int>>[4];
        for (int p = 0; p < producers.Length; p++)
        {
            producers[p] = runtime.Spawn((chans, id: p, perProducer, seed: (seed * 31) + p), static s => Produce(s.chans, s.id, s.perProducer, s.seed));
        }

        return producers;
    }

    private static Job<List<int>>[] SpawnConsumers(JobRuntime runtime, Chan<int>[] chans, int seed)
    {
        var consumers = new Job<List<int>>[4];
        consumers[0] = runtime.Spawn(chans, static c => Drain(c));
        for (int c = 1; c < consumers.Length; c++)
        {
            consumers[c] = runtime.Spawn((chans, seed: (seed * 37) + c + 100), static s => Consume(s.chans, s.seed));
        }

        return consumers;
    }

    /// <summary>Sends ids unique to this producer; returns those whose send was acknowledged.</summary>
    private static async Job<List<int>> Produce(Chan<int>[] chans, int id, int count, int seed)
    {
        var random = new Random(seed);
        var acked = new List<int>();
        for (int seq = 0; seq < count; seq++)
        {
            int item = (id * 1_000_000) + seq;
            Chan<int>? a = PickOpen(chans, random);
            Chan<int>? b = PickOpen(chans, random);
            if (a is null || b is null)
            {
                break; // every channel closed
            }

            try
            {
                if (await SendOnce(a, b, item, random))
                {
                    acked.Add(item);
                }
            }
            catch (ChannelClosedException)
            {
                // Not sent.
            }
            catch (OperationCanceledException)
            {
                // Not sent.
            }
        }

        return acked;
    }

    private static async Job<bool> SendOnce(Chan<int> a, Chan<int> b, int item, Random random)
    {
        switch (random.Next(7))
        {
            case 0:
                await a.SendAsync(item);
                return true;
            case 1:
                return a.TrySend(item);
            case 2:
            {
                using var cts = new CancellationTokenSource();
                Job send = a.SendAsync(item, cts.Token);
                if (random.Next(2) == 0)
                {
                    cts.Cancel(); // races with a receiver taking the item on the other worker
                }
                else
                {
                    cts.CancelAfter(1);
                }

                await send;
                return true;
            }

            case 3:
                await Select.Send(a, item).Send(b, item); // one item offered twice: only one case may deliver it
                return true;
            case 4:
                return await Select.Send(a, item).Send(b, item).Timeout(TimeSpan.FromMilliseconds(1)) != 2;
            case 5:
                return await Select.Send(a, item).Send(b, item).Default() != 2;
            default:
            {
                using var cts = new CancellationTokenSource();
                Job<int> select = Select.Send(a, item).Send(b, item).WithCancellation(cts.Token).AsJob();
                cts.Cancel();
                await select;
                return true;
            }
        }
    }

    /// <summary>
    /// Receives with a select over every live channel until all are closed and drained. Without it,
    /// the test itself could deadlock (every consumer blocked on one channel, every producer on
    /// another): this consumer always matches a blocked producer eventually.
    /// </summary>
    private static async Job<List<int>> Drain(Chan<int>[] chans)
    {
        var received = new List<int>();
        Action<ReceiveResult<int>> keep = r =>
        {
            if (r.Ok)
            {
                received.Add(r.Value);
            }
        };
        while (true)
        {
            SelectBuilder select = default;
            foreach (Chan<int> ch in chans)
            {
                if (!ch.IsCompleted)
                {
                    select = select.ReceiveOk(ch, keep);
                }
            }

            if (chans.All(static c => c.IsCompleted))
            {
                return received;
            }

            await select;
        }
    }

    /// <summary>Receives until every channel is closed and drained; returns what it received.</summary>
    private static async Job<List<int>> Consume(Chan<int>[] chans, int seed)
    {
        var random = new Random(seed);
        var received = new List<int>();
        Action<ReceiveResult<int>> keep = r =>
        {
            if (r.Ok)
            {
                received.Add(r.Value);
            }
        };
        while (true)
        {
            Chan<int>? a = PickLive(chans, random);
            Chan<int>? b = PickLive(chans, random);
            if (a is null || b is null)
            {
                return received;
            }

            try
            {
                await ReceiveOnce(a, b, random, received, keep);
            }
            catch (ChannelClosedException)
            {
                // Closed and drained.
            }
            catch (OperationCanceledException)
            {
                // Nothing taken.
            }
        }
    }

    private static async Job ReceiveOnce(Chan<int> a, Chan<int> b, Random random, List<int> received, Action<ReceiveResult<int>> keep)
    {
        switch (random.Next(7))
        {
            case 0:
                received.Add(await a.ReceiveAsync());
                break;
            case 1:
                keep(await a.ReceiveOkAsync());
                break;
            case 2:
                if (a.TryReceive(out int item))
                {
                    received.Add(item);
                }
                else
                {
                    await Job.Delay(random.Next(2)); // do not spin while nothing is there
                }

                break;
            case 3:
            {
                using var cts = new CancellationTokenSource();
                Job<int> receive = a.ReceiveAsync(cts.Token);
                if (random.Next(2) == 0)
                {
                    cts.Cancel();
                }
                else
                {
                    cts.CancelAfter(1);
                }

                received.Add(await receive);
                break;
            }

            case 4:
                await Select.ReceiveOk(a, keep).ReceiveOk(b, keep);
                break;
            case 5:
                await Select.ReceiveOk(a, keep).ReceiveOk(b, keep).Timeout(TimeSpan.FromMilliseconds(1));
                break;
            default:
                if (await Select.ReceiveOk(a, keep).ReceiveOk(b, keep).Default() == 2)
                {
                    await Job.Delay(random.Next(2));
                }

                break;
        }
    }

    private static Chan<int>? PickOpen(Chan<int>[] chans, Random random) => Pick(chans, random, static c => !c.IsClosed);

    private static Chan<int>? PickLive(Chan<int>[] chans, Random random) => Pick(chans, random, static c => !c.IsCompleted);

    private static Chan<int>? Pick(Chan<int>[] chans, Random random, Func<Chan<int>, bool> usable)
    {
        int start = random.Next(chans.Length);
        for (int i = 0; i < chans.Length; i++)
        {
            Chan<int> ch = chans[(start + i) % chans.Length];
            if (usable(ch))
            {
                return ch;
            }
        }

        return null;
    }

    private static void AssertConserved(List<int> acked, List<int> received)
    {
        acked.Sort();
        received.Sort();
        for (int i = 1; i < received.Count; i++)
        {
            Assert.True(received[i] != received[i - 1], $"item {received[i]} was delivered twice");
        }

        Assert.Equal(acked.Count, received.Count);
        Assert.Equal(acked, received);
    }
}
