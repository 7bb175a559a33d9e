using System;
using System.Collections.Generic;
using Myriad.Coordination;
using Myriad.Internal;
using Xunit;

namespace Myriad.Tests.Coordination;

public sealed class TimerHeapTests
{
    [Fact]
    public void AddRemove_RandomOperations_FirstIsAlwaysEarliest()
    {
        var random = new Random(3);
        var heap = new TimerHeap();
        var live = new List<TimerEntry>();
        long sequence = 0;
        for (int step = 0; step < 20_000; step++)
        {
            int action = random.Next(3);
            if (action < 2 || live.Count == 0)
            {
                var entry = new TimerEntry(new NoWork()) { Deadline = random.Next(1_000), Sequence = ++sequence };
                heap.Add(entry);
                live.Add(entry);
            }
            else
            {
                int pick = random.Next(live.Count);
                Assert.True(heap.Remove(live[pick]));
                Assert.False(heap.Remove(live[pick])); // already out
                live.RemoveAt(pick);
            }

            Assert.Equal(live.Count, heap.Count);
            if (live.Count > 0)
            {
                TimerEntry expected = live[0];
                foreach (TimerEntry e in live)
                {
                    if (e.FiresBefore(expected))
                    {
                        expected = e;
                    }
                }

                Assert.Same(expected, heap.First);
            }
        }
    }

    [Fact]
    public void RemoveFirst_Repeatedly_YieldsDeadlineThenSchedulingOrder()
    {
        var heap = new TimerHeap();
        var random = new Random(9);
        for (int i = 0; i < 1_000; i++)
        {
            heap.Add(new TimerEntry(new NoWork()) { Deadline = random.Next(50), Sequence = i });
        }

        TimerEntry? previous = null;
        while (heap.Count > 0)
        {
            TimerEntry first = heap.First;
            heap.Remove(first);
            Assert.Equal(-1, first.HeapIndex);
            if (previous is not null)
            {
                Assert.True(previous.FiresBefore(first));
            }

            previous = first;
        }
    }

    private sealed class NoWork : WorkItem
    {
        internal override void Execute(Myriad.Internal.PerThread state)
        {
        }
    }
}
