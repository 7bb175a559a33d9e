using System;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// The reader view's protocols under load (ChanBridge.Reader.cs and ChanBridge.Cells.cs): waits that
/// hand their item to waiting reads, reads parked at the close while an item is on its way, items
/// carried onto a job's runtime, and the hand-offs to jobs of a runtime being disposed. Readers of every
/// kind share one reader, one kind keeping a wait and a read outstanding together; every item must be
/// read exactly once, never after <c>Completion</c>, and nothing may hang.
/// </summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class ChanReaderStressTests
{
    private const int Kinds = 4;

    [Theory]
    [InlineData(0, false)]
    [InlineData(0, true)]
    [InlineData(3, true)]
    [InlineData(int.MaxValue, false)]
    [InlineData(int.MaxValue, true)]
    public void Reader_WaitsAndReadsTogetherRaceWritersAndClose_EveryItemOnceAndCompletionLast(int capacity, bool readersAreJobs)
    {
        const int Rounds = 60;
        const int Writers = 3;
        const int PerWriter = 100;
        const int Readers = 6;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        for (int round = 0; round < Rounds; round++)
        {
            Chan<int> ch = capacity == int.MaxValue ? Chan.Unbounded<int>() : Chan.Bounded<int>(capacity);
            ChannelReader<int> reader = ch.Reader;
            var seen = new Seen(Writers * PerWriter, reader.Completion);

            var writers = new Task[Writers];
            for (int w = 0; w < Writers; w++)
            {
                int first = w * PerWriter;
                writers[w] = Task.Run(async () =>
                {
                    for (int i = first; i < first + PerWriter; i++)
                    {
                        if (i % 2 == 0 || !ch.Writer.TryWrite(i))
                        {
                            await ch.Writer.WriteAsync(i);
                        }
                    }
                });
            }

            var readers = new Task[Readers];
            for (int r = 0; r < Readers; r++)
            {
                int kind = (r + round) % Kinds;
                readers[r] = readersAreJobs
                    ? runtime.Spawn((kind, reader, seen), static s => ReadLoop(s.kind, s.reader, s.seen)).AsTask()
                    : Task.Run(() => ReadLoop(kind, reader, seen).AsTask());
            }

            Assert.True(Task.WaitAll(writers, Bounded.Limit), "writers hung");
            Assert.True(ch.Writer.TryComplete());
            Assert.True(Task.WaitAll(readers, Bounded.Limit), $"readers hung (round {round}); the reader counts {reader.Count}");
            Assert.True(reader.Completion.Wait(Bounded.Limit), "Completion never completed");
            seen.AssertEveryItemOnce();
            Assert.Equal(0, reader.Count);
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(3)]
    public void Dispose_WhileThreadSendsToReaderJobs_NothingLostOrDuplicated(int capacity)
    {
        // The claim-time check (a job of the disposed runtime is skipped) and the carry onto the job's
        // runtime (an item claimed before the disposal and abandoned with the job goes back) race a
        // sender on a plain thread; whatever the interleaving, every item sent is read exactly once, by
        // a job or by the drain at the end (which reads through the reader: a wait may keep one).
        const int Rounds = 100;
        const int Readers = 8;
        var random = new Random(8642 + capacity);
        for (int round = 0; round < Rounds; round++)
        {
            Chan<long> ch = capacity == 0 ? Chan.Unbuffered<long>() : Chan.Bounded<long>(capacity);
            var counts = new Counts();
            var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
            for (int r = 0; r < Readers; r++)
            {
                _ = rt.Spawn((kind: (r + round) % Kinds, reader: ch.Reader, counts), static s => ReadLoop(s.kind, s.reader, s.counts));
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
            Assert.True(sender.Join(Bounded.Limit), "the sender hung");

            while (ch.Reader.TryRead(out long v))
            {
                counts.Take(v, completedBefore: false);
            }

            Assert.Equal(sentCount, Volatile.Read(ref counts.ReceivedCount));
            Assert.Equal(sentSum, Volatile.Read(ref counts.ReceivedSum));
        }
    }

    private interface ITaker<TItem>
    {
        /// <summary>Whether the reader's Completion has completed (read before a read starts).</summary>
        bool Completed { get; }

        /// <summary>An item read by a read that started when <see cref="Completed"/> was <paramref name="completedBefore"/>.</summary>
        void Take(TItem item, bool completedBefore);
    }

    /// <summary>One reader loop of each kind, until the channel is closed and drained (or the job is abandoned).</summary>
    private static async Job ReadLoop<TItem>(int kind, ChannelReader<TItem> reader, ITaker<TItem> taker)
    {
        switch (kind)
        {
            case 0:
                while (await reader.WaitToReadAsync())
                {
                    bool completed = taker.Completed;
                    while (reader.TryRead(out TItem? item))
                    {
                        taker.Take(item, completed);
                        completed = taker.Completed;
                    }
                }

                break;
            case 1:
                await foreach (TItem item in reader.ReadAllAsync())
                {
                    taker.Take(item, completedBefore: false);
                }

                break;
            case 2:
                while (true)
                {
                    TItem item;
                    bool completed = taker.Completed;
                    try
                    {
                        item = await reader.ReadAsync();
                    }
                    catch (ChannelClosedException)
                    {
                        break;
                    }

                    taker.Take(item, completed);
                }

                break;
            default:
                // A wait and a read outstanding together: the wait, ahead in the channel's queue, hands
                // its item to the read; at the close the read may park until the wait settles.
                while (true)
                {
                    bool completed = taker.Completed;
                    ValueTask<bool> wait = reader.WaitToReadAsync();
                    ValueTask<TItem> read = reader.ReadAsync();
                    bool readOpen = true;
                    try
                    {
                        taker.Take(await read, completed);
                    }
                    catch (ChannelClosedException)
                    {
                        readOpen = false;
                    }

                    bool waitOpen = await wait;
                    completed = taker.Completed;
                    while (reader.TryRead(out TItem? item))
                    {
                        taker.Take(item, completed);
                        completed = taker.Completed;
                    }

                    if (!readOpen && !waitOpen)
                    {
                        break;
                    }
                }

                break;
        }
    }

    /// <summary>Each item once, and none after <c>Completion</c> completed.</summary>
    private sealed class Seen(int items, Task completion) : ITaker<int>
    {
        private readonly int[] _seen = new int[items];
        private int _afterCompletion;

        public bool Completed => completion.IsCompleted;

        public void Take(int item, bool completedBefore)
        {
            if (completedBefore)
            {
                Interlocked.Increment(ref _afterCompletion); // Completion came before this item was read
            }

            Interlocked.Increment(ref _seen[item]);
        }

        public void AssertEveryItemOnce()
        {
            for (int i = 0; i < _seen.Length; i++)
            {
                Assert.True(Volatile.Read(ref _seen[i]) == 1, $"item {i} was read {_seen[i]} times");
            }

            Assert.Equal(0, Volatile.Read(ref _afterCompletion));
        }
    }

    private sealed class Counts : ITaker<long>
    {
        public long ReceivedSum;
        public long ReceivedCount;

        public bool Completed => false;

        public void Take(long item, bool completedBefore)
        {
            Interlocked.Add(ref ReceivedSum, item);
            Interlocked.Increment(ref ReceivedCount);
        }
    }
}
