using System;
using System.Collections.Generic;
using Myriad.Internal;
using Xunit;

namespace Myriad.Tests.Internal;

public class WorkQueueTests
{
    [Fact]
    public void RemoveAt_RandomPositionsWhileTheRingWraps_KeepsTheOrderOfTheRest()
    {
        // A list is the model; removals near the head and near the tail shift different sides.
        var random = new Random(7);
        var queue = new WorkQueue();
        var model = new List<WorkItem>();
        for (int step = 0; step < 20_000; step++)
        {
            if (model.Count == 0 || random.Next(3) != 0)
            {
                var item = new Marker();
                queue.Enqueue(item);
                model.Add(item);
            }
            else
            {
                int index = random.Next(model.Count);
                Assert.Same(model[index], queue.RemoveAt(index));
                model.RemoveAt(index);
            }

            if (step % 1_000 == 0 && queue.TryDequeue(out WorkItem? head))
            {
                Assert.Same(model[0], head);
                model.RemoveAt(0);
            }
        }

        Assert.Equal(model.Count, queue.Count);
        for (int i = 0; i < model.Count; i++)
        {
            Assert.Same(model[i], queue.PeekAt(i));
        }

        Assert.Same(model[^1], queue.PeekLast());
    }

    private sealed class Marker : WorkItem
    {
        internal override void Execute(PerThread state)
        {
        }
    }
}
