using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// <see cref="Chan{T}.Reader"/> against a BCL channel's reader on the same sequence of calls: each
/// test runs the sequence on both and asserts the BCL's outcome first, so a change of the BCL's
/// behaviour shows as such rather than as a Myriad failure.
/// </summary>
public sealed class ChanReaderParityTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(10);

    [Fact]
    public void Completion_ChannelClosedWithAnErrorAndNobodyAwaitsIt_RaisesNoUnobservedTaskException()
    {
        // The faulted Completion task was never marked observed: when the garbage collector
        // finalized it, TaskScheduler.UnobservedTaskException fired for every channel closed with
        // an error, where a BCL channel's stays silent.
        string marker = "close error " + Guid.NewGuid();
        int seen = 0;
        EventHandler<UnobservedTaskExceptionEventArgs> handler = (_, e) =>
        {
            if (e.Exception.InnerException?.Message == marker)
            {
                Interlocked.Increment(ref seen);
                e.SetObserved();
            }
        };
        TaskScheduler.UnobservedTaskException += handler;
        try
        {
            CloseWithErrorAndDrain(marker);
            for (int i = 0; i < 3; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }

            Assert.Equal(0, Volatile.Read(ref seen));
        }
        finally
        {
            TaskScheduler.UnobservedTaskException -= handler;
        }

        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        static void CloseWithErrorAndDrain(string message)
        {
            var viaWriter = Chan.Unbounded<int>();
            viaWriter.Writer.TryComplete(new InvalidOperationException(message));
            Assert.False(viaWriter.Reader.TryRead(out _));
            Assert.True(viaWriter.Reader.Completion.IsFaulted);

            var viaClose = Chan.Unbounded<int>();
            Assert.True(viaClose.TrySend(1));
            viaClose.Close(new InvalidOperationException(message));
            Assert.True(viaClose.Reader.TryRead(out _));
            Assert.False(viaClose.Reader.TryRead(out _));
        }
    }

    [Fact]
    public void ReadAsync_CanceledTokenWithBufferedItem_ReturnsCanceledAndKeepsTheItem()
    {
        using var cts = new CancellationTokenSource();
        cts.Cancel();

        Channel<int> bcl = Channel.CreateUnbounded<int>();
        bcl.Writer.TryWrite(1);
        Assert.True(bcl.Reader.ReadAsync(cts.Token).IsCanceled);
        Assert.Equal(1, bcl.Reader.Count);

        Chan<int> ch = Chan.Unbounded<int>();
        ch.TrySend(1);
        ValueTask<int> read = ch.Reader.ReadAsync(cts.Token);
        Assert.True(read.IsCanceled);
        Assert.Equal(cts.Token, Assert.ThrowsAny<OperationCanceledException>(() => read.GetAwaiter().GetResult()).CancellationToken);
        Assert.Equal(1, ch.Reader.Count);
        Assert.True(ch.TryReceive(out int item));
        Assert.Equal(1, item);
    }

    [Fact]
    public void ReadAsync_CanceledTokenWithItemKeptByWaitToReadAsync_ReturnsCanceledAndKeepsTheItem()
    {
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        Chan<int> ch = Chan.Unbounded<int>();
        ch.TrySend(1);
        Assert.True(ch.Reader.WaitToReadAsync().AsTask().Wait(Limit)); // the reader keeps 1

        Assert.True(ch.Reader.ReadAsync(cts.Token).IsCanceled);
        Assert.Equal(1, ch.Reader.Count);
        Assert.True(ch.Reader.TryRead(out int item));
        Assert.Equal(1, item);
    }

    [Fact]
    public void ReadAsync_WaitingBehindWaitToReadAsync_GetsTheItemAndTheWaitGoesOnWaiting()
    {
        // A BCL reader gives an item to a waiting read before it wakes a wait: the wait completes
        // only with the next item (or false at the close).
        Channel<int> bcl = Channel.CreateUnbounded<int>();
        Task<bool> bclWait = bcl.Reader.WaitToReadAsync().AsTask();
        Task<int> bclRead = bcl.Reader.ReadAsync().AsTask();
        bcl.Writer.TryWrite(1);
        Assert.True(bclRead.Wait(Limit));
        Assert.Equal(1, bclRead.Result);
        Assert.False(bclWait.Wait(50));
        Assert.Equal(0, bcl.Reader.Count);
        bcl.Writer.TryWrite(2);
        Assert.True(bclWait.Wait(Limit));
        Assert.True(bclWait.Result);
        Assert.Equal(1, bcl.Reader.Count);

        Chan<int> ch = Chan.Unbounded<int>();
        Task<bool> wait = ch.Reader.WaitToReadAsync().AsTask();
        Task<int> read = ch.Reader.ReadAsync().AsTask();
        Assert.True(ch.TrySend(1));
        Assert.True(read.Wait(Limit), "the read still waits while the reader keeps the item");
        Assert.Equal(1, read.Result);
        Assert.False(wait.IsCompleted);
        Assert.Equal(0, ch.Reader.Count);
        Assert.True(ch.TrySend(2));
        Assert.True(wait.Wait(Limit));
        Assert.True(wait.Result);
        Assert.Equal(1, ch.Reader.Count);
        Assert.True(ch.Reader.TryRead(out int item));
        Assert.Equal(2, item);

        ch.Close(); // nothing left: the reader completes
        Assert.True(ch.Reader.Completion.Wait(Limit));
    }

    [Fact]
    public void ReadAsync_WaitingBehindWaitToReadAsyncThenClose_WaitReturnsFalse()
    {
        Channel<int> bcl = Channel.CreateUnbounded<int>();
        Task<bool> bclWait = bcl.Reader.WaitToReadAsync().AsTask();
        Task<int> bclRead = bcl.Reader.ReadAsync().AsTask();
        bcl.Writer.TryWrite(1);
        bcl.Writer.Complete();
        Assert.Equal(1, bclRead.Result);
        Assert.False(bclWait.Result);

        Chan<int> ch = Chan.Unbuffered<int>();
        Task<bool> wait = ch.Reader.WaitToReadAsync().AsTask();
        Task<int> read = ch.Reader.ReadAsync().AsTask();
        Assert.True(ch.TrySend(1));
        ch.Close();
        Assert.True(read.Wait(Limit));
        Assert.Equal(1, read.Result);
        Assert.True(wait.Wait(Limit));
        Assert.False(wait.Result);
        Assert.True(ch.Reader.Completion.Wait(Limit));
    }

    [Fact]
    public void ReadAsync_TwoWaitingBehindWaitToReadAsync_GetTheItemsInOrder()
    {
        Chan<int> ch = Chan.Unbuffered<int>();
        Task<bool> wait = ch.Reader.WaitToReadAsync().AsTask();
        Task<int> first = ch.Reader.ReadAsync().AsTask();
        Task<int> second = ch.Reader.ReadAsync().AsTask();
        Assert.True(ch.TrySend(1)); // to the wait, which hands it to the first read
        Assert.True(ch.TrySend(2));
        Assert.True(first.Wait(Limit));
        Assert.True(second.Wait(Limit));
        Assert.Equal(1, first.Result);
        Assert.Equal(2, second.Result);
        Assert.False(wait.IsCompleted);
        Assert.Equal(0, ch.Reader.Count);
        Assert.True(ch.TrySend(3));
        Assert.True(wait.Wait(Limit));
        Assert.True(ch.Reader.TryRead(out int third));
        Assert.Equal(3, third);
    }

    [Fact]
    public void ReadAllAsync_WaitingBehindWaitToReadAsync_GetsTheItemTheWaitReceived()
    {
        Chan<int> ch = Chan.Unbounded<int>();
        Task<bool> wait = ch.Reader.WaitToReadAsync().AsTask();
        IAsyncEnumerator<int> all = ch.Reader.ReadAllAsync().GetAsyncEnumerator();
        Task<bool> next = all.MoveNextAsync().AsTask();
        Assert.True(ch.TrySend(1));
        Assert.True(next.Wait(Limit), "the enumeration still waits while the reader keeps the item");
        Assert.True(next.Result);
        Assert.Equal(1, all.Current);
        Assert.False(wait.IsCompleted);
        ch.Close();
        Assert.True(wait.Wait(Limit));
        Assert.False(wait.Result);
    }

    [Fact]
    public void WaitToReadAsync_ClosedWhileAnotherWaitKeepsAnItem_ReturnsTrue()
    {
        Channel<int> bcl = Channel.CreateUnbounded<int>();
        Task<bool> bclFirst = bcl.Reader.WaitToReadAsync().AsTask();
        Task<bool> bclSecond = bcl.Reader.WaitToReadAsync().AsTask();
        bcl.Writer.TryWrite(1);
        bcl.Writer.Complete();
        Assert.True(bclFirst.Result);
        Assert.True(bclSecond.Result);

        Chan<int> ch = Chan.Unbuffered<int>();
        Task<bool> first = ch.Reader.WaitToReadAsync().AsTask();
        Task<bool> second = ch.Reader.WaitToReadAsync().AsTask();
        Assert.True(ch.TrySend(1)); // the first wait keeps it
        ch.Close();
        Assert.True(first.Wait(Limit));
        Assert.True(first.Result);
        Assert.True(second.Wait(Limit));
        Assert.True(second.Result, "the second wait reported the reader done while it still kept an item");
        Assert.True(ch.Reader.TryRead(out int item));
        Assert.Equal(1, item);
        Assert.True(ch.Reader.Completion.Wait(Limit));
    }

    [Theory]
    [InlineData("ReadAsync")]
    [InlineData("ReadAllAsync")]
    public void ReadAsync_ClosedWhileAWaitsItemIsOnItsWay_GetsThatItem(string how)
    {
        // A wait of a job whose runtime nobody drives yet: the item it received travels to that
        // runtime (in flight, neither in the channel nor kept) when the channel closes under a read.
        Chan<int> ch = Chan.Unbuffered<int>();
        using var rt = new CurrentThreadRuntime();
        Job<bool> waiting = rt.Spawn(ch, static async c => await c.Reader.WaitToReadAsync());
        rt.RunUntilIdle(); // the job waits
        Assert.True(ch.TrySend(1)); // to the wait; on its way to the job's runtime
        Task<bool> read = how == "ReadAsync"
            ? ReadOne(ch.Reader.ReadAsync())
            : ch.Reader.ReadAllAsync().GetAsyncEnumerator().MoveNextAsync().AsTask();
        Assert.False(read.IsCompleted);

        ch.Close();
        Assert.False(read.IsCompleted, "the read ended while the item was still on its way to the reader");
        rt.RunUntilIdle(); // the wait settles: the item is the read's

        Assert.True(read.Wait(Limit));
        Assert.True(read.Result);
        Assert.True(waiting.Wait());
        Assert.Equal(0, ch.Reader.Count);
        Assert.True(ch.Reader.Completion.Wait(Limit));

        static async Task<bool> ReadOne(ValueTask<int> read) => await read == 1;
    }

    [Fact]
    public void ReadAsync_ClosedWhileAWaitIsOnItsWayWithoutItem_ThrowsChannelClosed()
    {
        Chan<int> ch = Chan.Unbuffered<int>();
        Task<bool> wait = ch.Reader.WaitToReadAsync().AsTask();
        Task<int> read = ch.Reader.ReadAsync().AsTask();
        ch.Close();
        Assert.True(wait.Wait(Limit));
        Assert.False(wait.Result);
        var error = Assert.Throws<AggregateException>(() => read.Wait(Limit));
        Assert.IsType<ChannelClosedException>(error.InnerException);
        Assert.True(ch.Reader.Completion.Wait(Limit));
    }
}
