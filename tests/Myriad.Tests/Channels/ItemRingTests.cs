using Myriad.Channels;
using Xunit;

namespace Myriad.Tests.Channels;

public class ItemRingTests
{
    [Fact]
    public void Dequeue_DrainingABurstPastTheRetainedSize_ReleasesTheArray()
    {
        var ring = new ItemRing<object>(int.MaxValue);
        for (int i = 0; i < 100_000; i++)
        {
            ring.Enqueue(i);
        }

        Assert.True(ring.AllocatedSlots >= 100_000);
        for (int i = 0; i < 100_000; i++)
        {
            Assert.Equal(i, ring.Dequeue());
        }

        Assert.Equal(0, ring.AllocatedSlots);

        // It starts again from the small initial ring.
        ring.Enqueue("next");
        Assert.Equal(ChanDefaults.InitialRingSize, ring.AllocatedSlots);
        Assert.Equal("next", ring.Dequeue());
    }

    [Fact]
    public void Dequeue_EmptyingASmallRing_KeepsItsArray()
    {
        var ring = new ItemRing<int>(64);
        for (int round = 0; round < 3; round++)
        {
            for (int i = 0; i < 64; i++)
            {
                ring.Enqueue(i);
            }

            for (int i = 0; i < 64; i++)
            {
                Assert.Equal(i, ring.Dequeue());
            }

            Assert.Equal(64, ring.AllocatedSlots);
        }
    }

    [Fact]
    public void EnqueueFront_AfterTheArrayWasReleased_KeepsFifoOrder()
    {
        var ring = new ItemRing<int>(int.MaxValue);
        for (int i = 0; i < 5000; i++)
        {
            ring.Enqueue(i);
        }

        while (ring.Count > 0)
        {
            ring.Dequeue();
        }

        ring.EnqueueFront(1);
        ring.Enqueue(2);
        ring.EnqueueFront(0);
        Assert.Equal(0, ring.Dequeue());
        Assert.Equal(1, ring.Dequeue());
        Assert.Equal(2, ring.Dequeue());
    }
}
