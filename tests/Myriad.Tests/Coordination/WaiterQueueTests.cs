using System;
using System.Collections.Generic;
using Myriad.Coordination;
using Xunit;

namespace Myriad.Tests.Coordination;

public sealed class WaiterQueueTests
{
    [Fact]
    public void InHostQueue_ClaimedIntoAPrivateQueue_IsClearedWhileLinked()
    {
        var queue = default(WaiterQueue<int>);
        var a = new FakeWaiter(1);
        var b = new FakeWaiter(2);
        queue.Enqueue(a);
        queue.Enqueue(b);
        Assert.True(a.InHostQueue);
        Assert.True(b.InHostQueue);

        var claimed = default(WaiterQueue<int>);
        queue.DrainClaimable(ref claimed);
        Assert.NotNull(a.Next); // linked in the private queue...
        Assert.False(a.InHostQueue); // ...but no longer in the host's
        Assert.False(b.InHostQueue);

        Assert.Same(a, claimed.Dequeue());
        Assert.Null(a.Next);
        Assert.False(a.InHostQueue);
    }

    [Fact]
    public void Enqueue_Remove_KeepsFifoOfTheRest()
    {
        var queue = default(WaiterQueue<int>);
        var waiters = new List<FakeWaiter>();
        for (int i = 0; i < 6; i++)
        {
            var w = new FakeWaiter(i);
            waiters.Add(w);
            queue.Enqueue(w);
        }

        Assert.True(queue.Remove(waiters[0])); // head
        Assert.True(queue.Remove(waiters[3])); // middle
        Assert.True(queue.Remove(waiters[5])); // tail
        Assert.False(queue.Remove(waiters[3])); // not queued any more

        Assert.Equal([1, 2, 4], Drain(ref queue));
        Assert.True(queue.IsEmpty);
    }

    [Fact]
    public void DequeueClaimable_SkipsAndDropsStaleWaiters()
    {
        var queue = default(WaiterQueue<int>);
        var stale = new FakeWaiter(1) { Claimable = false };
        var live = new FakeWaiter(2);
        queue.Enqueue(stale);
        queue.Enqueue(live);

        Assert.Same(live, queue.DequeueClaimable());
        Assert.Null(stale.Next); // dropped, unlinked
        Assert.True(queue.IsEmpty);
        Assert.Null(queue.DequeueClaimable());
    }

    [Fact]
    public void DrainClaimable_MovesOnlyClaimableWaitersInOrder()
    {
        var queue = default(WaiterQueue<int>);
        for (int i = 0; i < 5; i++)
        {
            queue.Enqueue(new FakeWaiter(i) { Claimable = i != 2 });
        }

        var claimed = default(WaiterQueue<int>);
        queue.DrainClaimable(ref claimed);

        Assert.True(queue.IsEmpty);
        Assert.Equal([0, 1, 3, 4], Drain(ref claimed));
    }

    [Fact]
    public void Remove_RandomOperations_MatchAListModel()
    {
        var random = new Random(17);
        var queue = default(WaiterQueue<int>);
        var model = new List<FakeWaiter>();
        for (int step = 0; step < 10_000; step++)
        {
            if (model.Count == 0 || random.Next(3) > 0)
            {
                var w = new FakeWaiter(step);
                queue.Enqueue(w);
                model.Add(w);
            }
            else
            {
                FakeWaiter w = model[random.Next(model.Count)];
                Assert.True(queue.Remove(w));
                model.Remove(w);
            }

            Assert.Equal(model.Count == 0 ? null : model[0], queue.Head);
        }

        var expected = model.ConvertAll(w => w.Item);
        Assert.Equal(expected, Drain(ref queue));
    }

    private static List<int> Drain(ref WaiterQueue<int> queue)
    {
        var items = new List<int>();
        while (queue.Dequeue() is { } w)
        {
            items.Add(w.Item);
        }

        return items;
    }

    private sealed class FakeWaiter(int item) : IWaiter<int>
    {
        public bool Claimable { get; init; } = true;

        public IWaiter<int>? Next { get; set; }

        public IWaiter<int>? Prev { get; set; }

        public bool InHostQueue { get; set; }

        public bool IsSender => true;

        public int Item => item;

        public bool TryClaim() => Claimable;

        public void Complete(int item)
        {
        }

        public void CompleteClosed(Exception? error)
        {
        }
    }
}
