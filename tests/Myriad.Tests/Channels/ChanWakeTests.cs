using System;
using System.Threading;
using Myriad.Channels;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// Where a send resumes the receiver it hands an item to (see <c>Chan{T}.Wake.cs</c>): a buffered
/// channel's wake is deferred to the sending worker's run-next slot, so the sender goes on and the
/// receiver runs when the sender suspends, or on a worker that steals it; an unbuffered channel hands
/// over inline.
/// </summary>
public sealed class ChanWakeTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(20);

    [Theory]
    [InlineData(-1, false)] // unbounded
    [InlineData(16, false)] // bounded
    [InlineData(0, true)] // unbuffered
    public void SendAsync_ReceiverWaitingOnAOneWorkerRuntime_ResumesItInlineOnlyWhenUnbuffered(int capacity, bool inline)
    {
        // One worker: nobody can steal the deferred receiver, so whether it ran before the send
        // returned tells the two apart. An unbounded channel used to hand over inline too: with a
        // consumer that keeps up, every send ran the consumer for one item on the producer's thread,
        // and a whole pipeline of unbounded channels ran serially on one core.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Chan<int> channel = capacity < 0 ? Chan.Unbounded<int>() : Chan.Bounded<int>(capacity);
        var probe = new Probe();
        Job<int> receiver = runtime.Spawn((channel, probe), static async s =>
        {
            Volatile.Write(ref s.probe.Waiting, 1);
            int item = await s.channel.ReceiveAsync();
            Volatile.Write(ref s.probe.Received, 1);
            return item;
        });
        Assert.True(SpinWait.SpinUntil(() => Volatile.Read(ref probe.Waiting) == 1, Limit));
        Thread.Sleep(20); // the receiver is parked on the channel

        // Spawned, so that the sender runs on the worker (the deferral is a worker's).
        Job<bool> sender = runtime.Spawn((channel, probe), static async s =>
        {
            await s.channel.SendAsync(42);
            return Volatile.Read(ref s.probe.Received) == 1;
        });

        var sent = sender.AsTask();
        var received = receiver.AsTask();
        Assert.True(sent.Wait(Limit) && received.Wait(Limit));
        Assert.Equal(inline, sent.Result);
        Assert.Equal(42, received.Result);
    }

    private sealed class Probe
    {
        public int Waiting;
        public int Received;
    }
}
