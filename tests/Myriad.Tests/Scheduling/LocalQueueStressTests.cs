using System;
using System.Collections.Concurrent;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>One owner pushes and pops while thieves steal: every item is taken exactly once.</summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public class LocalQueueStressTests
{
    [Theory]
    [InlineData(4)]
    [InlineData(256)]
    public void OwnerAndThieves_EveryItemTakenExactlyOnce(int capacity) =>
        RunOwnerAgainstThieves(capacity, static (queue, item, i, take) =>
        {
            if (i % 3 == 0)
            {
                take(queue.Owner.Pop());
            }
        });

    [Theory]
    [InlineData(2)]
    [InlineData(8)]
    [InlineData(256)]
    public void OwnerTakingBackItsLastPush_WhileThievesSteal_EveryItemTakenExactlyOnce(int capacity) =>
        RunOwnerAgainstThieves(capacity, static (queue, item, i, take) =>
        {
            // Most pushes are taken back at once (a spawn its spawner runs), racing the thieves
            // for the very item when the ring holds just it.
            if (i % 4 != 0 && queue.Owner.TryTakeBackLast(item))
            {
                take(item);
            }
            else if (i % 7 == 0)
            {
                take(queue.Owner.Pop());
            }
        });

    /// <summary>
    /// One owner pushes 400,000 items (overflow batches kept aside), doing <paramref name="afterPush"/>
    /// after each, while two thieves steal and run what they took; then every item must have been
    /// taken exactly once.
    /// </summary>
    private static void RunOwnerAgainstThieves(int capacity, Action<LocalQueue, WorkItem, int, Action<WorkItem?>> afterPush)
    {
        const int items = 400_000;
        const int thieves = 2;
        var queue = new LocalQueue(capacity);
        var taken = new int[items];
        var overflow = new ConcurrentQueue<WorkItem>();
        int done = 0;

        void Take(WorkItem? item)
        {
            if (item is LocalQueueTests.Item i)
            {
                Interlocked.Increment(ref taken[i.Id]);
            }
        }

        var threads = new Thread[thieves];
        for (int t = 0; t < thieves; t++)
        {
            threads[t] = new Thread(() =>
            {
                var own = new LocalQueue(capacity);
                while (Volatile.Read(ref done) == 0 || !queue.Stealer.IsEmpty)
                {
                    Take(own.Owner.StealFrom(queue.Stealer));
                    while (own.Owner.Pop() is { } mine)
                    {
                        Take(mine);
                    }
                }
            });
            threads[t].Start();
        }

        TestHelpers.OnThread(() =>
        {
            for (int i = 0; i < items; i++)
            {
                var item = new LocalQueueTests.Item(i);
                queue.Owner.Push(item, batch =>
                {
                    foreach (WorkItem w in batch)
                    {
                        overflow.Enqueue(w);
                    }
                });
                afterPush(queue, item, i, Take);
            }

            while (queue.Owner.Pop() is { } rest)
            {
                Take(rest);
            }
        });
        Volatile.Write(ref done, 1);
        foreach (Thread thread in threads)
        {
            Assert.True(thread.Join(60_000));
        }

        while (overflow.TryDequeue(out WorkItem? w))
        {
            Take(w);
        }

        for (int i = 0; i < items; i++)
        {
            Assert.True(taken[i] == 1, $"item {i} taken {taken[i]} times");
        }
    }
}
