using System.Collections.Generic;
using Myriad.Internal;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Scheduling;

public class LocalQueueTests
{
    internal sealed class Item(int id) : WorkItem
    {
        public int Id { get; } = id;

        internal override void Execute(Myriad.Internal.PerThread state)
        {
        }
    }

    [Fact]
    public void Constructor_CapacityNotPowerOfTwo_Throws()
    {
        Assert.Throws<System.ArgumentOutOfRangeException>(() => new LocalQueue(3));
        Assert.Throws<System.ArgumentOutOfRangeException>(() => new LocalQueue(1));
    }

    [Fact]
    public void PushPop_IsFifo()
    {
        var queue = new LocalQueue(8);
        for (int i = 0; i < 5; i++)
        {
            queue.Owner.Push(new Item(i), _ => Assert.Fail("no overflow expected"));
        }

        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(i, ((Item)queue.Owner.Pop()!).Id);
        }

        Assert.Null(queue.Owner.Pop());
    }

    [Fact]
    public void Push_WhenFull_MovesHalfPlusNewItemToOverflow()
    {
        var queue = new LocalQueue(8);
        var overflowed = new List<int>();
        for (int i = 0; i < 9; i++)
        {
            queue.Owner.Push(new Item(i), batch =>
            {
                foreach (WorkItem w in batch)
                {
                    overflowed.Add(((Item)w).Id);
                }
            });
        }

        Assert.Equal(new[] { 0, 1, 2, 3, 8 }, overflowed);
        Assert.Equal(4, queue.Count);
        Assert.Equal(4, ((Item)queue.Owner.Pop()!).Id);
    }

    [Fact]
    public void Steal_TakesHalfRoundedUp()
    {
        var victim = new LocalQueue(16);
        var thief = new LocalQueue(16);
        for (int i = 0; i < 7; i++)
        {
            victim.Owner.Push(new Item(i), _ => Assert.Fail("no overflow expected"));
        }

        WorkItem? first = thief.Owner.StealFrom(victim.Stealer);
        Assert.Equal(0, ((Item)first!).Id);
        Assert.Equal(3, thief.Count); // 4 taken: one returned to run, three queued
        Assert.Equal(3, victim.Count);
        Assert.Equal(4, ((Item)victim.Owner.Pop()!).Id);
        Assert.Equal(1, ((Item)thief.Owner.Pop()!).Id);
    }

    [Fact]
    public void Steal_FromEmpty_ReturnsNull()
    {
        var victim = new LocalQueue(4);
        var thief = new LocalQueue(4);
        Assert.Null(thief.Owner.StealFrom(victim.Stealer));
        Assert.True(victim.Stealer.IsEmpty);
    }

    [Fact]
    public void TryTakeBackLast_NotTheNewestEntry_LeavesTheQueueAlone()
    {
        var queue = new LocalQueue(8);
        var first = new LocalQueueTests.Item(1);
        var second = new LocalQueueTests.Item(2);
        queue.Owner.Push(first, _ => { });
        queue.Owner.Push(second, _ => { });
        Assert.False(queue.Owner.TryTakeBackLast(first));
        Assert.True(queue.Owner.TryTakeBackLast(second));
        Assert.Same(first, queue.Owner.Pop());
        Assert.Null(queue.Owner.Pop());
        Assert.False(queue.Owner.TryTakeBackLast(first));
    }

    private static Item[] PushAll(LocalQueue queue, int count)
    {
        var items = new Item[count];
        for (int i = 0; i < count; i++)
        {
            items[i] = new Item(i);
            queue.Owner.Push(items[i], _ => Assert.Fail("no overflow expected"));
        }

        return items;
    }

    [Fact]
    public void Forget_AnEntryBelowTheNewest_PopSkipsIt()
    {
        var queue = new LocalQueue(8);
        Item[] items = PushAll(queue, 4);
        queue.Owner.Forget(items[1], depth: 32);
        Assert.Equal(0, ((Item)queue.Owner.Pop()!).Id);
        Assert.Equal(2, ((Item)queue.Owner.Pop()!).Id);
        Assert.Equal(3, ((Item)queue.Owner.Pop()!).Id);
        Assert.Null(queue.Owner.Pop());
    }

    [Fact]
    public void Forget_EntryDeeperThanTheScan_LeavesItQueued()
    {
        var queue = new LocalQueue(8);
        Item[] items = PushAll(queue, 4);
        queue.Owner.Forget(items[0], depth: 3); // the 3 newest are items 1-3
        Assert.Same(items[0], queue.Owner.Pop());
    }

    [Fact]
    public void TryTakeBackLastAndTrim_AfterTheOlderSiblingsWereCleared_GivesTheirRoomBack()
    {
        // An ancestor's entries below, then a parent's three children, awaited in order.
        var queue = new LocalQueue(16);
        Item[] items = PushAll(queue, 9);
        queue.Owner.Forget(items[6], depth: 32);
        queue.Owner.Forget(items[7], depth: 32);
        Assert.True(queue.Owner.TryTakeBackLastAndTrim(items[8]));
        Assert.Equal(6, queue.Count);
        Assert.True(queue.Owner.TryTakeBackLastAndTrim(items[5]));
        Assert.Equal(5, queue.Count);
    }

    [Fact]
    public void TryTakeBackLastAndTrim_EveryEntryCleared_EmptiesTheRing()
    {
        var queue = new LocalQueue(16);
        Item[] items = PushAll(queue, 6);
        for (int i = 0; i < 5; i++)
        {
            queue.Owner.Forget(items[i], depth: 32);
        }

        Assert.True(queue.Owner.TryTakeBackLastAndTrim(items[5]));
        Assert.Equal(0, queue.Count);
        Assert.Null(queue.Owner.Pop());
        queue.Owner.Push(items[0], _ => Assert.Fail("no overflow expected"));
        Assert.Same(items[0], queue.Owner.Pop());
    }

    [Fact]
    public void TryTakeBackLast_SeveralInARow_EachTakesTheNewest()
    {
        var queue = new LocalQueue(8);
        Item[] items = PushAll(queue, 3);
        Assert.True(queue.Owner.TryTakeBackLast(items[2]));
        Assert.True(queue.Owner.TryTakeBackLast(items[1]));
        Assert.Equal(1, queue.Count);
        Assert.Same(items[0], queue.Owner.Pop());
    }

    [Fact]
    public void Steal_SkipsClearedEntries()
    {
        var victim = new LocalQueue(16);
        var thief = new LocalQueue(16);
        Item[] items = PushAll(victim, 8);
        victim.Owner.Forget(items[0], depth: 32);
        victim.Owner.Forget(items[2], depth: 32);
        WorkItem? first = thief.Owner.StealFrom(victim.Stealer); // entries 0-3
        Assert.Same(items[1], first);
        Assert.Equal(1, thief.Count);
        Assert.Same(items[3], thief.Owner.Pop());
        Assert.Equal(4, victim.Count);
    }

    [Fact]
    public void Steal_OnlyClearedEntriesInTheStolenHalf_LooksAgainAndTakesTheNext()
    {
        var victim = new LocalQueue(16);
        var thief = new LocalQueue(16);
        Item[] items = PushAll(victim, 4);
        victim.Owner.Forget(items[0], depth: 32);
        victim.Owner.Forget(items[1], depth: 32);
        Assert.Same(items[2], thief.Owner.StealFrom(victim.Stealer)); // half of 4 were cleared; then half of 2
        Assert.Equal(0, thief.Count);
        Assert.Equal(1, victim.Count);
        Assert.Same(items[3], victim.Owner.Pop());
    }

    [Fact]
    public void Push_WhenFull_ClearedEntriesDoNotOverflow()
    {
        var queue = new LocalQueue(8);
        Item[] items = PushAll(queue, 8);
        queue.Owner.Forget(items[1], depth: 32);
        queue.Owner.Forget(items[3], depth: 32);
        var overflowed = new List<int>();
        queue.Owner.Push(new Item(8), batch =>
        {
            foreach (WorkItem w in batch)
            {
                overflowed.Add(((Item)w).Id);
            }
        });

        Assert.Equal(new[] { 0, 2, 8 }, overflowed);
        Assert.Equal(4, ((Item)queue.Owner.Pop()!).Id);
    }
}
