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
}
