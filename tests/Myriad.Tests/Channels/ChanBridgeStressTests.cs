using System;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Channels;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// The ChannelReader view under concurrency: readers of every kind (WaitToReadAsync + TryRead,
/// ReadAsync, ReadAllAsync) race writers and the close; every item is read exactly once, and
/// <c>Completion</c> never completes while an item is still to be handed out.
/// </summary>
public sealed class ChanBridgeStressTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(4)]
    [InlineData(int.MaxValue)]
    public void Reader_WritersAndCloseRace_EveryItemOnceAndCompletionLast(int capacity)
    {
        const int Rounds = 200;
        const int Writers = 3;
        const int PerWriter = 50;
        const int Readers = 3;
        for (int round = 0; round < Rounds; round++)
        {
            Chan<int> ch = capacity == int.MaxValue ? Chan.Unbounded<int>() : Chan.Bounded<int>(capacity);
            ChannelReader<int> reader = ch.Reader;
            ChannelWriter<int> writer = ch.Writer;
            var seen = new int[Writers * PerWriter];
            int read = 0;
            int readAfterCompletion = 0;
            Task completion = reader.Completion;

            var writers = new Task[Writers];
            for (int w = 0; w < Writers; w++)
            {
                int first = w * PerWriter;
                writers[w] = Task.Run(async () =>
                {
                    for (int i = first; i < first + PerWriter; i++)
                    {
                        await writer.WriteAsync(i);
                    }
                });
            }

            var readers = new Task[Readers];
            for (int r = 0; r < Readers; r++)
            {
                int kind = (r + round) % 3;
                readers[r] = Task.Run(async () =>
                {
                    void Take(int item, bool completedBefore)
                    {
                        Assert.Equal(1, Interlocked.Increment(ref seen[item]));
                        Interlocked.Increment(ref read);
                        if (completedBefore)
                        {
                            Interlocked.Increment(ref readAfterCompletion); // Completion came too early
                        }
                    }

                    if (kind == 0)
                    {
                        while (await reader.WaitToReadAsync())
                        {
                            bool completedBefore = completion.IsCompleted;
                            while (reader.TryRead(out int item))
                            {
                                Take(item, completedBefore);
                                completedBefore = completion.IsCompleted;
                            }
                        }
                    }
                    else if (kind == 1)
                    {
                        await foreach (int item in reader.ReadAllAsync())
                        {
                            Take(item, completedBefore: false);
                        }
                    }
                    else
                    {
                        while (true)
                        {
                            int item;
                            bool completedBefore = completion.IsCompleted;
                            try
                            {
                                item = await reader.ReadAsync();
                            }
                            catch (ChannelClosedException)
                            {
                                break;
                            }

                            Take(item, completedBefore);
                        }
                    }
                });
            }

            Assert.True(Task.WaitAll(writers, TimeSpan.FromSeconds(30)), "writers hung");
            Assert.True(writer.TryComplete());
            Assert.True(Task.WaitAll(readers, TimeSpan.FromSeconds(30)), "readers hung");
            Assert.True(completion.Wait(TimeSpan.FromSeconds(30)), "Completion never completed");
            Assert.Equal(seen.Length, Volatile.Read(ref read));
            Assert.Equal(0, Volatile.Read(ref readAfterCompletion));
        }
    }
}
