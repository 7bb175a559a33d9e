using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
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

    [Theory]
    [InlineData(8)]
    [InlineData(16)]
    [InlineData(256)]
    public void OwnerClearingAndTrimmingClaimedEntries_WhileThievesSteal_EveryItemClaimedExactlyOnce(int capacity) =>
        RunGroupsAgainstThieves(capacity, static (queue, group, claim) =>
        {
            // Join helping's pattern: children claimed in order, each cleared, the newest taken
            // back, which trims the cleared ones below it.
            foreach (LocalQueueTests.Item item in group)
            {
                if (claim(item) && !queue.Owner.TryTakeBackLastAndTrim(item))
                {
                    queue.Owner.Forget(item, 32);
                }
            }
        });

    [Theory]
    [InlineData(8)]
    [InlineData(16)]
    [InlineData(256)]
    public void OwnerTakingBackSeveralInARow_WhileThievesSteal_EveryItemClaimedExactlyOnce(int capacity) =>
        RunGroupsAgainstThieves(capacity, static (queue, group, claim) =>
        {
            // Children awaited newest first: each take-back lowers the tail again, so a thief
            // that read the tail before the first one must not commit a range that reaches below
            // the last one.
            for (int i = group.Count - 1; i >= 0; i--)
            {
                if (claim(group[i]))
                {
                    queue.Owner.TryTakeBackLast(group[i]);
                }
            }
        });

    /// <summary>
    /// The owner pushes 300,000 items in groups of 1-11 and hands each group (but every fourth,
    /// left to the thieves like the children of a parent that suspended) to
    /// <paramref name="ownerTakes"/>, while two thieves steal. Everyone claims what it gets: a
    /// thief may still get a copy of an entry the owner cleared or took back, as a spawn box's
    /// stale entry, so claims decide, and every item must be claimed exactly once.
    /// </summary>
    private static void RunGroupsAgainstThieves(int capacity, Action<LocalQueue, List<LocalQueueTests.Item>, Func<LocalQueueTests.Item, bool>> ownerTakes)
    {
        const int items = 300_000;
        var claims = new int[items];
        var claimedCount = new int[items];
        var queue = new LocalQueue(capacity);
        var overflow = new ConcurrentQueue<WorkItem>();
        int done = 0;

        void Claim(WorkItem? item)
        {
            if (item is LocalQueueTests.Item i && Interlocked.Exchange(ref claims[i.Id], 1) == 0)
            {
                Interlocked.Increment(ref claimedCount[i.Id]);
            }
        }

        Thread[] thieves = StartThieves(2, capacity, queue, () => Volatile.Read(ref done) != 0, Claim);

        TestHelpers.OnThread(() =>
        {
            var random = new Random(17);
            var group = new List<LocalQueueTests.Item>();
            int next = 0;
            while (next < items)
            {
                group.Clear();
                int size = Math.Min(random.Next(1, 12), items - next);
                for (int i = 0; i < size; i++)
                {
                    var item = new LocalQueueTests.Item(next++);
                    group.Add(item);
                    queue.Owner.Push(item, batch =>
                    {
                        foreach (WorkItem w in batch)
                        {
                            overflow.Enqueue(w);
                        }
                    });
                }

                // Now and then a group is left for the thieves (a parent that suspended).
                if (random.Next(4) == 0)
                {
                    continue;
                }

                ownerTakes(queue, group, item =>
                {
                    if (Interlocked.Exchange(ref claims[item.Id], 1) != 0)
                    {
                        return false; // a thief has it
                    }

                    Interlocked.Increment(ref claimedCount[item.Id]);
                    return true;
                });
            }

            while (queue.Owner.Pop() is { } rest)
            {
                Claim(rest);
            }
        });
        FinishThieves(thieves, () => Volatile.Write(ref done, 1), overflow, Claim);

        Assert.Equal(0, queue.Count);
        for (int i = 0; i < items; i++)
        {
            Assert.True(claimedCount[i] == 1, $"item {i} claimed {claimedCount[i]} times");
        }
    }

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

        Thread[] threads = StartThieves(thieves, capacity, queue, () => Volatile.Read(ref done) != 0, Take);

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
        FinishThieves(threads, () => Volatile.Write(ref done, 1), overflow, Take);

        for (int i = 0; i < items; i++)
        {
            Assert.True(taken[i] == 1, $"item {i} taken {taken[i]} times");
        }
    }

    /// <summary>
    /// Starts <paramref name="count"/> thieves, each with a ring of its own, that steal from
    /// <paramref name="victim"/> and hand every item they get to <paramref name="take"/>, until the
    /// owner is done and the victim is empty.
    /// </summary>
    private static Thread[] StartThieves(int count, int capacity, LocalQueue victim, Func<bool> ownerDone, Action<WorkItem?> take)
    {
        var threads = new Thread[count];
        for (int t = 0; t < count; t++)
        {
            threads[t] = new Thread(() =>
            {
                var own = new LocalQueue(capacity);
                while (!ownerDone() || !victim.Stealer.IsEmpty)
                {
                    take(own.Owner.StealFrom(victim.Stealer));
                    while (own.Owner.Pop() is { } mine)
                    {
                        take(mine);
                    }
                }
            });
            threads[t].Start();
        }

        return threads;
    }

    /// <summary>Tells the thieves the owner is done, waits for them, then takes what overflowed.</summary>
    private static void FinishThieves(Thread[] thieves, Action markDone, ConcurrentQueue<WorkItem> overflow, Action<WorkItem?> take)
    {
        markDone();
        foreach (Thread thread in thieves)
        {
            Assert.True(thread.Join(60_000));
        }

        while (overflow.TryDequeue(out WorkItem? w))
        {
            take(w);
        }
    }
}
