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

    [Theory]
    [InlineData(0)]
    [InlineData(4)]
    public void Reader_JobsReadingWhileTheWriterCancelsThem_EveryItemOnce(int capacity)
    {
        // The waiting reads are pooled boxes: canceled reads, completed reads and their reuse race
        // across the workers (the writer cancels every reader's current read now and then). A
        // canceled read consumes no item, so every item still arrives exactly once.
        const int Rounds = 100;
        const int Items = 300;
        const int Readers = 4;
        const int CancelEvery = 10;
        using var runtime = new Myriad.Scheduling.MultiThreadRuntime(new Myriad.Scheduling.RuntimeOptions { WorkerCount = 2 });
        for (int round = 0; round < Rounds; round++)
        {
            Chan<int> ch = capacity == 0 ? Chan.Unbuffered<int>() : Chan.Bounded<int>(capacity);
            var seen = new int[Items];
            var current = new CancellationTokenSource?[Readers];
            var readers = new Job[Readers];
            for (int r = 0; r < Readers; r++)
            {
                readers[r] = runtime.Spawn((ch, seen, current, r), static async s =>
                {
                    ChannelReader<int> reader = s.ch.Reader;
                    while (true)
                    {
                        using var cts = new CancellationTokenSource();
                        Volatile.Write(ref s.current[s.r], cts);
                        int item;
                        try
                        {
                            item = await reader.ReadAsync(cts.Token);
                        }
                        catch (OperationCanceledException)
                        {
                            continue;
                        }
                        catch (ChannelClosedException)
                        {
                            return;
                        }

                        if (Interlocked.Increment(ref s.seen[item]) != 1)
                        {
                            throw new InvalidOperationException($"item {item} read twice");
                        }
                    }
                });
            }

            Job writer = runtime.Spawn((ch, current), static async s =>
            {
                for (int i = 0; i < Items; i++)
                {
                    if (i % CancelEvery == 0)
                    {
                        foreach (CancellationTokenSource? cts in s.current)
                        {
                            try
                            {
                                cts?.Cancel();
                            }
                            catch (ObjectDisposedException)
                            {
                                // that read already finished
                            }
                        }
                    }

                    await s.ch.Writer.WriteAsync(i);
                }

                s.ch.Writer.Complete();
            });

            Task all = Task.WhenAll(writer.AsTask(), Task.WhenAll(Array.ConvertAll(readers, r => r.AsTask())));
            Assert.True(all.Wait(TimeSpan.FromSeconds(30)), "hung");
            Assert.All(seen, count => Assert.Equal(1, count));
        }
    }
}
