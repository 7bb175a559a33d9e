using System;
using System.Threading;
using Myriad.Coordination;
using Myriad.Internal;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Coordination;

public sealed class SystemTimerQueueTests
{
    [Fact]
    public void Schedule_AfterTheTimerThreadFailedToStart_StartsItAndFires()
    {
        var queue = new SystemTimerQueue(shards: 1); // a queue of its own
        queue.StartThread = static (_, _) => throw new OutOfMemoryException("no thread for now");
        var first = new SignalingWork();
        Assert.Throws<OutOfMemoryException>(() => queue.Schedule(first.Entry, TimeSpan.FromMilliseconds(1), null));
        Assert.Equal(0, queue.Count); // nothing left in the wheel for a thread that never came

        queue.StartThread = static (thread, q) => thread.UnsafeStart(q);
        var second = new SignalingWork();
        queue.Schedule(second.Entry, TimeSpan.FromMilliseconds(1), null);
        Assert.True(second.Fired.Wait(TimeSpan.FromSeconds(20)), "the timer never fired: the thread was never started again");
    }

    private sealed class SignalingWork : WorkItem
    {
        internal readonly TimerEntry Entry;
        internal readonly ManualResetEventSlim Fired = new();

        internal SignalingWork() => Entry = new TimerEntry(this);

        internal override void Execute(PerThread state) => Fired.Set();
    }
}
