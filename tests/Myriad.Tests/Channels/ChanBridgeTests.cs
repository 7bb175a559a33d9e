using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Channels;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>Chan{T}.Reader / Writer as System.Threading.Channels types, and SendAllAsync.</summary>
public sealed class ChanBridgeTests
{
    [Fact]
    public void Reader_Writer_SameInstanceEveryRead()
    {
        var ch = Chan.Bounded<int>(4);
        Assert.Same(ch.Reader, ch.Reader);
        Assert.Same(ch.Writer, ch.Writer);
    }

    [Fact]
    public async Task WriterAndReader_ItemsFlowInOrder_ReadAllAsyncEndsAtClose()
    {
        var ch = Chan.Bounded<int>(2);
        ChannelWriter<int> writer = ch.Writer;
        Task producer = Task.Run(async () =>
        {
            for (int i = 0; i < 50; i++)
            {
                await writer.WriteAsync(i);
            }

            Assert.True(writer.TryComplete());
        });
        var seen = new List<int>();
        await foreach (int item in ch.Reader.ReadAllAsync())
        {
            seen.Add(item);
        }

        await producer;
        Assert.Equal(Enumerable.Range(0, 50), seen);
        await ch.Reader.Completion.WaitAsync(TimeSpan.FromSeconds(10));
    }

    [Fact]
    public async Task ReaderReadAllAsync_DisposeWhileMoveNextWaits_WithdrawsTheReadAndTheNextItemStays()
    {
        var ch = Chan.Unbounded<string>();
        using var outer = new CancellationTokenSource();
        using var inner = new CancellationTokenSource();
        IAsyncEnumerator<string> e = ch.Reader.ReadAllAsync(outer.Token).GetAsyncEnumerator(inner.Token); // linked source
        Task<bool> next = e.MoveNextAsync().AsTask();
        Assert.False(next.IsCompleted);
        await e.DisposeAsync();
        Assert.True(ch.Writer.TryWrite("order-1"));
        ch.Writer.Complete();
        Assert.True(ch.Reader.TryRead(out string? left)); // the abandoned read took nothing
        Assert.Equal("order-1", left);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => next);
        await ch.Reader.Completion.WaitAsync(TimeSpan.FromSeconds(10)); // the withdrawn read settled
    }

    [Fact]
    public void ReaderReadAllAsync_MoveNextWhileThePreviousWaits_ThrowsInvalidOperationAndTakesNothing()
    {
        var ch = Chan.Unbounded<int>();
        IAsyncEnumerator<int> e = ch.Reader.ReadAllAsync().GetAsyncEnumerator();
        ValueTask<bool> first = e.MoveNextAsync();
        InvalidOperationException misuse = Assert.Throws<InvalidOperationException>(() => e.MoveNextAsync());
        Assert.Contains("MoveNextAsync was called while the previous call was still pending", misuse.Message);
        Assert.True(ch.Writer.TryWrite(1));
        Assert.True(ch.Writer.TryWrite(2));
        Assert.True(first.AsTask().GetAwaiter().GetResult());
        Assert.Equal(1, e.Current);
        Assert.True(ch.Reader.TryRead(out int left));
        Assert.Equal(2, left);
    }

    [Fact]
    public async Task ReaderReadAllAsync_MoveNextAfterDisposeAsync_ReturnsFalseAndTakesNothing()
    {
        var ch = Chan.Unbounded<int>();
        Assert.True(ch.Writer.TryWrite(1));
        Assert.True(ch.Writer.TryWrite(2));
        IAsyncEnumerator<int> e = ch.Reader.ReadAllAsync().GetAsyncEnumerator();
        Assert.True(await e.MoveNextAsync());
        await e.DisposeAsync();

        Assert.False(await e.MoveNextAsync());
        Assert.True(ch.Reader.TryRead(out int left)); // the item a disposed enumeration would have taken
        Assert.Equal(2, left);
    }

    [Fact]
    public void TryWrite_FullOrClosed_ReturnsFalse()
    {
        var ch = Chan.Bounded<int>(1);
        Assert.True(ch.Writer.TryWrite(1));
        Assert.False(ch.Writer.TryWrite(2));
        Assert.Equal(1, ch.Reader.Count);
        Assert.True(ch.Reader.CanCount);
        Assert.True(ch.Writer.TryComplete());
        Assert.False(ch.Writer.TryComplete());
        Assert.False(ch.Writer.TryWrite(3));
        Assert.False(ch.Writer.WaitToWriteAsync().AsTask().Result);
    }

    [Fact]
    public void TryComplete_WithError_ReaderCompletionFaultsAfterDrain()
    {
        var ch = Chan.Bounded<int>(1);
        ch.Writer.TryWrite(1);
        var error = new FormatException("producer failed");
        Assert.True(ch.Writer.TryComplete(error));
        Assert.True(ch.IsClosed);
        Assert.False(ch.Reader.Completion.IsCompleted);
        Assert.True(ch.Reader.TryRead(out int item));
        Assert.Equal(1, item);
        Assert.False(ch.Reader.TryRead(out _));
        Assert.Same(error, Assert.Throws<AggregateException>(() => ch.Reader.Completion.Wait()).InnerException);
        Assert.Same(error, Assert.Throws<FormatException>(() => ch.Reader.WaitToReadAsync().AsTask().GetAwaiter().GetResult()));
    }

    [Fact]
    public void Completion_ClosedEmpty_CompletesAtClose()
    {
        var ch = Chan.Unbounded<int>();
        Task completion = ch.Reader.Completion;
        Assert.False(completion.IsCompleted);
        ch.Close();
        Assert.True(completion.Wait(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public async Task WaitToReadAsync_ThenTryRead_GetsTheItemThatArrived()
    {
        var ch = Chan.Unbuffered<string>();
        ValueTask<bool> wait = ch.Reader.WaitToReadAsync();
        Assert.False(wait.IsCompleted);
        Job send = ch.SendAsync("x");
        Assert.True(await wait);
        Assert.Equal(1, ch.Reader.Count);
        Assert.True(ch.Reader.TryRead(out string? got));
        Assert.Equal("x", got);
        await send;
        ch.Close();
        Assert.False(await ch.Reader.WaitToReadAsync());
    }

    [Fact]
    public async Task ReadAsync_Closed_ThrowsBclChannelClosedException()
    {
        var ch = Chan.Bounded<int>(1);
        ch.Close();
        await Assert.ThrowsAsync<ChannelClosedException>(() => ch.Reader.ReadAsync().AsTask());
        Assert.Throws<ChannelClosedException>(() => ch.TrySend(1));
    }

    [Fact]
    public async Task SendAllAsync_AsyncSequence_SendsEverythingThenCloses()
    {
        var ch = Chan.Bounded<int>(3);
        Job fill = ch.SendAllAsync(Numbers(10));
        var seen = new List<int>();
        await foreach (int n in ch.ReadAllAsync())
        {
            seen.Add(n);
        }

        await fill;
        Assert.Equal(Enumerable.Range(0, 10), seen);
        Assert.True(ch.IsCompleted);
    }

    [Fact]
    public async Task SendAllAsync_SourceThrows_ChannelClosedWithTheError()
    {
        var ch = Chan.Unbounded<int>();
        Job fill = ch.SendAllAsync(Failing());
        await Assert.ThrowsAsync<FormatException>(() => fill.AsTask());
        Assert.Equal(1, await ch.ReceiveAsync());
        await Assert.ThrowsAsync<FormatException>(() => ch.ReceiveAsync().AsTask());
        Assert.Throws<ArgumentNullException>(() => ch.SendAllAsync(null!));
    }

    // Completion, as a BCL reader's: it completes when the reader takes the last item of a closed
    // channel, with no further read needed.

    public static IEnumerable<object[]> DirectReceives() =>
    [
        ["ReceiveAsync"],
        ["ReceiveOkAsync"],
        ["TryReceive"],
        ["ReadAllAsync"],
        ["Select"],
    ];

    [Theory]
    [MemberData(nameof(DirectReceives))]
    public void Completion_LastItemTakenByADirectReceive_Completes(string receive)
    {
        var ch = Chan.Bounded<int>(4);
        Task completion = ch.Reader.Completion; // fetched before the drain: nothing reads it again
        ch.TrySend(1);
        ch.TrySend(2);
        ch.Close();

        int sum = 0;
        switch (receive)
        {
            case "ReceiveAsync":
                sum = ch.ReceiveAsync().Wait() + ch.ReceiveAsync().Wait();
                break;
            case "ReceiveOkAsync":
                sum = ch.ReceiveOkAsync().Wait().Value + ch.ReceiveOkAsync().Wait().Value;
                break;
            case "TryReceive":
                Assert.True(ch.TryReceive(out int a));
                Assert.True(ch.TryReceive(out int b));
                sum = a + b;
                break;
            case "ReadAllAsync":
                sum = Sum(ch).Wait();
                break;
            case "Select":
                int picked = 0;
                Select.Receive(ch, x => picked += x).AsJob().Wait();
                Select.Receive(ch, x => picked += x).AsJob().Wait();
                sum = picked;
                break;
        }

        Assert.Equal(3, sum);
        Assert.True(completion.Wait(TimeSpan.FromSeconds(10)), $"Completion did not complete after {receive} drained the closed channel");

        static async Job<int> Sum(Chan<int> channel)
        {
            int total = 0;
            await foreach (int item in channel.ReadAllAsync())
            {
                total += item;
            }

            return total;
        }
    }

    [Fact]
    public void ReadAsync_StartedInACurrentThreadRuntimesJobAndAwaitedAfterRun_CompletesWithTheItem()
    {
        // The read's ValueTask escapes the job: it must not need that runtime to complete.
        var ch = Chan.Unbuffered<int>();
        using var runtime = new Myriad.Scheduling.CurrentThreadRuntime();
        ValueTask<int> read = runtime.Run(ch, static c => Job.FromResult(c.Reader.ReadAsync()));
        ValueTask<bool> wait = runtime.Run(ch, static c => Job.FromResult(c.Reader.WaitToReadAsync()));
        Task<int> readTask = read.AsTask();
        Task<bool> waitTask = wait.AsTask();
        Assert.True(ch.TrySend(7));
        Assert.True(ch.TrySend(8));
        Assert.True(readTask.Wait(TimeSpan.FromSeconds(10)), "the escaped read never completed");
        Assert.Equal(7, readTask.Result);
        Assert.True(waitTask.Wait(TimeSpan.FromSeconds(10)), "the escaped wait never completed");
        Assert.True(ch.Reader.TryRead(out int kept));
        Assert.Equal(8, kept);
    }

    [Fact]
    public void Completion_ChannelDrainedDirectlyWhileTheReaderKeepsAnItem_WaitsForThatItem()
    {
        var ch = Chan.Bounded<int>(4);
        Task completion = ch.Reader.Completion;
        ch.TrySend(1);
        ch.TrySend(2);
        Assert.True(ch.Reader.WaitToReadAsync().AsTask().Wait(TimeSpan.FromSeconds(10))); // the reader keeps 1
        ch.Close();
        Assert.True(ch.TryReceive(out int direct));
        Assert.Equal(2, direct);
        Assert.False(completion.IsCompleted); // the kept item is still to be read

        Assert.True(ch.Reader.TryRead(out int kept));
        Assert.Equal(1, kept);
        Assert.True(completion.Wait(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public void Completion_LastItemTakenByTryRead_Completes()
    {
        var ch = Chan.Bounded<int>(2);
        Task completion = ch.Reader.Completion;
        Assert.True(ch.Writer.TryWrite(1));
        Assert.True(ch.Writer.TryComplete());
        Assert.False(completion.IsCompleted);

        Assert.True(ch.Reader.TryRead(out int item));
        Assert.Equal(1, item);
        Assert.True(completion.Wait(TimeSpan.FromSeconds(10)), "Completion did not complete after the last item was read");
    }

    [Fact]
    public async Task Completion_LastItemTakenByReadAsync_Completes()
    {
        var ch = Chan.Unbuffered<int>();
        Task completion = ch.Reader.Completion;
        ValueTask<int> read = ch.Reader.ReadAsync(); // waits: nothing sent yet
        Job send = ch.SendAsync(7);
        Assert.Equal(7, await read);
        await send;
        ch.Close();
        Assert.True(completion.Wait(TimeSpan.FromSeconds(10)));

        var buffered = Chan.Bounded<int>(1);
        completion = buffered.Reader.Completion;
        buffered.TrySend(8);
        buffered.Close();
        Assert.Equal(8, await buffered.Reader.ReadAsync());
        Assert.True(completion.Wait(TimeSpan.FromSeconds(10)), "Completion did not complete after the last item was read");
    }

    [Fact]
    public async Task ReadAsync_ClosedWithError_ThrowsChannelClosedExceptionAroundTheError()
    {
        // A BCL reader's ReadAsync wraps the completion error in a ChannelClosedException (its
        // WaitToReadAsync and Completion throw the error itself), so `catch (ChannelClosedException)`
        // ends a read loop whatever the close.
        var ch = Chan.Bounded<int>(1);
        ValueTask<int> waiting = ch.Reader.ReadAsync();
        var error = new FormatException("producer failed");
        ch.Close(error);

        var thrown = await Assert.ThrowsAsync<ChannelClosedException>(() => waiting.AsTask());
        Assert.Same(error, thrown.InnerException);
        thrown = await Assert.ThrowsAsync<ChannelClosedException>(() => ch.Reader.ReadAsync().AsTask());
        Assert.Same(error, thrown.InnerException);
        Assert.Same(error, await Assert.ThrowsAsync<FormatException>(() => ch.Reader.WaitToReadAsync().AsTask()));
    }

    [Fact]
    public void Completion_ClosedWithOperationCanceled_IsCanceled()
    {
        // As a BCL channel completed with an OperationCanceledException (SendAllAsync closes the
        // channel so when its token fires).
        var ch = Chan.Unbounded<int>();
        ch.Close(new OperationCanceledException("stopped"));
        Task completion = ch.Reader.Completion;
        Assert.True(((IAsyncResult)completion).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(10)));
        Assert.True(completion.IsCanceled, $"expected Canceled, got {completion.Status}");
    }

    [Fact]
    public void Completion_CloseWhileWaitToReadAsyncHoldsTheLastItem_WaitsForThatItem()
    {
        // The item a WaitToReadAsync received belongs to the reader (the caller's continuation
        // waits in a context nobody runs yet) when the channel closes: Completion must not complete
        // before the reader hands that item out.
        var ch = Chan.Unbuffered<int>();
        Task completion = ch.Reader.Completion;
        var context = new ManualContext();
        SynchronizationContext? previous = SynchronizationContext.Current;
        ValueTask<bool> wait;
        SynchronizationContext.SetSynchronizationContext(context);
        try
        {
            wait = ch.Reader.WaitToReadAsync();
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }

        Assert.True(ch.TrySend(5)); // taken by the waiting receive
        ch.Close();
        Assert.False(completion.IsCompleted, "Completion completed while the last item was still on its way to the reader");

        context.RunAll();
        Task<bool> waited = wait.AsTask(); // a ValueTask is consumed once
        Assert.True(waited.Wait(TimeSpan.FromSeconds(10)));
        Assert.True(waited.Result);
        Assert.False(completion.IsCompleted);
        Assert.True(ch.Reader.TryRead(out int item));
        Assert.Equal(5, item);
        Assert.True(completion.Wait(TimeSpan.FromSeconds(10)));
    }

    /// <summary>Queues posted continuations until the test runs them.</summary>
    private sealed class ManualContext : SynchronizationContext
    {
        private readonly Queue<(SendOrPostCallback Callback, object? State)> _queue = new();

        public override void Post(SendOrPostCallback d, object? state)
        {
            lock (_queue)
            {
                _queue.Enqueue((d, state));
            }
        }

        public void RunAll()
        {
            while (true)
            {
                (SendOrPostCallback Callback, object? State) next;
                lock (_queue)
                {
                    if (!_queue.TryDequeue(out next))
                    {
                        return;
                    }
                }

                next.Callback(next.State);
            }
        }
    }

    private static async IAsyncEnumerable<int> Numbers(int count)
    {
        for (int i = 0; i < count; i++)
        {
            await Task.Yield();
            yield return i;
        }
    }

    private static async IAsyncEnumerable<int> Failing([EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        await Task.Yield();
        yield return 1;
        throw new FormatException("source failed");
    }
}
