using System;
using System.Threading;
using System.Threading.Channels;
using Myriad.Channels;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// The inline receiver (a channel doubles as the completion cell of one waiting receive): it must be
/// invisible except in allocations, so every Go rule still holds around it.
/// </summary>
public abstract partial class ChanContractTests
{
    [Fact]
    public void ReceiveAsync_LoneWaitingReceiver_AllocatesNothing()
    {
        Chan<int> warm = Create<int>();
        Job<int> first = warm.ReceiveAsync(); // warms the JIT and statics
        warm.TrySend(0);
        Sync.Result(first);

        Chan<int> ch = Create<int>(); // a fresh channel: no pooled or spare waiter can be reused
        long before = GC.GetAllocatedBytesForCurrentThread();
        Job<int> receive = ch.ReceiveAsync();
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.False(receive.IsCompleted);
        Assert.Equal(0, allocated);
        Assert.True(ch.TrySend(7));
        Assert.Equal(7, Sync.Result(receive));
    }

    [Fact]
    public void ReceiveAsync_InlineReceiverConsumed_NextReceiveReusesItAndOldHandleIsStale()
    {
        Chan<int> ch = Create<int>();
        Job<int> first = ch.ReceiveAsync();
        Assert.True(ch.TrySend(1));
        Assert.Equal(1, Sync.Result(first));

        Job<int> second = ch.ReceiveAsync();
        Assert.False(second.IsCompleted);
        Assert.Throws<InvalidOperationException>(() => first.GetAwaiter().GetResult());
        Assert.True(ch.TrySend(2));
        Assert.Equal(2, Sync.Result(second));
    }

    [Fact]
    public void ReceiveAsync_InlineReceiverAwaitedTwice_Throws()
    {
        Chan<int> ch = Create<int>();
        Job<int> receive = ch.ReceiveAsync();
        receive.GetAwaiter().UnsafeOnCompleted(static () => { });
        var error = Assert.Throws<InvalidOperationException>(() => receive.GetAwaiter().UnsafeOnCompleted(static () => { }));
        Assert.Contains("twice", error.Message);
        Assert.True(ch.TrySend(3)); // the first registration still runs
    }

    [Fact]
    public void ReceiveAsync_FirstReceiverServedButNotConsumed_NextReceiverStillWaitsAndIsServed()
    {
        Chan<int> ch = Create<int>();
        Job<int> first = ch.ReceiveAsync();
        Assert.True(ch.TrySend(1)); // completes the first receive; its result is not read yet

        Job<int> second = ch.ReceiveAsync();
        Assert.False(second.IsCompleted);
        Assert.True(ch.TrySend(2));

        Assert.Equal(2, Sync.Result(second));
        Assert.Equal(1, Sync.Result(first));
    }

    [Fact]
    public void ReceiveAsync_InlineThenQueuedReceivers_ServedInArrivalOrder()
    {
        Chan<int> ch = Create<int>();
        using var cts = new CancellationTokenSource();
        Job<int> inline = ch.ReceiveAsync();
        Job<int> cancelable = ch.ReceiveAsync(cts.Token);
        Job<ReceiveResult<int>> ok = ch.ReceiveOkAsync();
        Job<int> plain = ch.ReceiveAsync();

        for (int i = 1; i <= 4; i++)
        {
            Assert.True(ch.TrySend(i));
        }

        Assert.Equal(1, Sync.Result(inline));
        Assert.Equal(2, Sync.Result(cancelable));
        Assert.Equal(3, Sync.Result(ok).Value);
        Assert.Equal(4, Sync.Result(plain));
    }

    [Fact]
    public void SelectSend_InlineReceiverWaiting_DeliversToIt()
    {
        Chan<int> ch = Create<int>();
        Job<int> receive = ch.ReceiveAsync();
        int fired = Sync.Result(Select.Send(ch, 11).AsJob());
        Assert.Equal(0, fired);
        Assert.Equal(11, Sync.Result(receive));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Close_InlineReceiverWaiting_WakesItWithTheCloseOutcome(bool withError)
    {
        Chan<int> ch = Create<int>();
        Job<int> inline = ch.ReceiveAsync();
        Job<int> queued = ch.ReceiveAsync();
        var error = new TimeoutException("closed with this");

        ch.Close(withError ? error : null);

        Assert.True(inline.IsCompleted);
        Exception first = Assert.ThrowsAny<Exception>(() => inline.GetAwaiter().GetResult());
        Exception second = Assert.ThrowsAny<Exception>(() => queued.GetAwaiter().GetResult());
        if (withError)
        {
            Assert.Same(error, first);
            Assert.Same(error, second);
        }
        else
        {
            Assert.IsType<ChannelClosedException>(first);
            Assert.IsType<ChannelClosedException>(second);
        }
    }

    [Fact]
    public void Chan_IsNotAValueTaskSource()
    {
        // The cell behind the inline receiver must not be reachable through a public interface.
        Assert.False(typeof(Chan<int>).IsAssignableTo(typeof(System.Threading.Tasks.Sources.IValueTaskSource<int>)));
        Assert.False(typeof(Chan<int>).IsAssignableTo(typeof(System.Threading.Tasks.Sources.IValueTaskSource)));
    }

    [Fact]
    public void ReceiveAsync_InlineReceiver_ConvertsToValueTask()
    {
        Chan<int> ch = Create<int>();
        System.Threading.Tasks.ValueTask<int> receive = ch.ReceiveAsync().AsValueTask();
        Assert.False(receive.IsCompleted);
        Assert.True(ch.TrySend(5));
        Assert.Equal(5, receive.Result);
    }
}
