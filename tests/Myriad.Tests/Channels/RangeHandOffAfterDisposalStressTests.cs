using System;
using System.Threading;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// Disposes runtimes while a plain thread sends to jobs that receive with <c>await foreach</c> over
/// <see cref="Chan{T}.ReadAllAsync"/> (and, beside them, with <c>ReceiveAsync</c>): whatever the
/// interleaving (a hand-off before the drain, during it, or after the disposal), every item sent is
/// received exactly once, by a job or by the drain at the end.
/// </summary>
public sealed class RangeHandOffAfterDisposalStressTests
{
    private const int Rounds = 100;
    private const int Receivers = 6;

    [Theory]
    [InlineData(0)]
    [InlineData(3)]
    public void Dispose_WhileThreadSendsToRangeReceivers_NothingLostOrDuplicated(int capacity)
    {
        var random = new Random(4321 + capacity);
        for (int round = 0; round < Rounds; round++)
        {
            Chan<long> ch = capacity == 0 ? Chan.Unbuffered<long>() : Chan.Bounded<long>(capacity);
            var counts = new Counts();
            var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
            for (int i = 0; i < Receivers; i++)
            {
                _ = i % 3 == 0
                    ? rt.Spawn((ch, counts), static async s =>
                    {
                        while (true)
                        {
                            s.counts.Add(await s.ch.ReceiveAsync());
                        }
                    })
                    : rt.Spawn((ch, counts), static async s =>
                    {
                        await foreach (long v in s.ch.ReadAllAsync())
                        {
                            s.counts.Add(v);
                        }
                    });
            }

            var stop = new ManualResetEventSlim();
            long sentSum = 0;
            long sentCount = 0;
            TestThread sender = TestThread.Start(() =>
            {
                long next = 1;
                while (!stop.IsSet)
                {
                    if (ch.TrySend(next))
                    {
                        sentSum += next;
                        sentCount++;
                        next++;
                    }
                }
            }, "sender");

            Thread.Sleep(random.Next(0, 3));
            rt.Dispose();
            Thread.Sleep(random.Next(0, 3)); // hand-offs after the disposal, too
            stop.Set();
            Assert.True(sender.Join(TimeSpan.FromSeconds(30)), "the sender hung");

            while (ch.TryReceive(out long v))
            {
                counts.Add(v);
            }

            Assert.Equal(sentCount, Volatile.Read(ref counts.ReceivedCount));
            Assert.Equal(sentSum, Volatile.Read(ref counts.ReceivedSum));
        }
    }

    private sealed class Counts
    {
        public long ReceivedSum;
        public long ReceivedCount;

        public void Add(long v)
        {
            Interlocked.Add(ref ReceivedSum, v);
            Interlocked.Increment(ref ReceivedCount);
        }
    }
}
