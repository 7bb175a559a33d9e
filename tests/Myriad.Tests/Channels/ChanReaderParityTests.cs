using System;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Channels;
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
}
