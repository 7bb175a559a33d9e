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

    [Fact]
    public void Schedule_WhileAnotherThreadsStartFails_StartsTheThreadItselfAndFires()
    {
        // One thread is starting the timer thread when a second schedules; the start then fails.
        // The second must not leave its timer in a wheel that no thread will ever look at.
        var queue = new SystemTimerQueue(shards: 1);
        using var inStart = new ManualResetEventSlim();
        using var fail = new ManualResetEventSlim();
        int calls = 0;
        queue.StartThread = (thread, q) =>
        {
            if (Interlocked.Increment(ref calls) == 1)
            {
                inStart.Set();
                fail.Wait();
                throw new OutOfMemoryException("no thread for now");
            }

            thread.UnsafeStart(q);
        };

        Exception? firstError = null;
        var first = new Thread(() =>
        {
            try
            {
                queue.Schedule(new SignalingWork().Entry, TimeSpan.FromMilliseconds(1), null);
            }
            catch (OutOfMemoryException e)
            {
                firstError = e;
            }
        });
        first.Start();
        Assert.True(inStart.Wait(TimeSpan.FromSeconds(20)));

        var second = new SignalingWork();
        var secondThread = new Thread(() => queue.Schedule(second.Entry, TimeSpan.FromMilliseconds(1), null));
        secondThread.Start();
        Thread.Sleep(50); // the second schedule is under way, waiting for the first start's outcome
        fail.Set();

        Assert.True(first.Join(TimeSpan.FromSeconds(20)));
        Assert.True(secondThread.Join(TimeSpan.FromSeconds(20)));
        Assert.IsType<OutOfMemoryException>(firstError);
        Assert.True(second.Fired.Wait(TimeSpan.FromSeconds(20)), "the second timer never fired");
    }

    private sealed class SignalingWork : WorkItem
    {
        internal readonly TimerEntry Entry;
        internal readonly ManualResetEventSlim Fired = new();

        internal SignalingWork() => Entry = new TimerEntry(this);

        internal override void Execute(PerThread state) => Fired.Set();
    }
}
