using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Channels;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>Select and <c>ReadAllAsync</c> under Go's channel rules, for every kind of channel (see <see cref="ChanContractTests"/>).</summary>
public abstract partial class ChanContractTests
{
    [Fact]
    public void Select_OneReceiveReady_PicksOnlyTheReadyCase()
    {
        Chan<int> idle = Create<int>();
        Chan<int> ready = Create<int>();
        Job pendingSend = MakeReceiveReady(ready, 7);
        int got = 0;

        int fired = Sync.Result(Select.Receive(idle, _ => Assert.Fail("not ready")).Receive(ready, v => got = v).AsJob());

        Assert.Equal(1, fired);
        Assert.Equal(7, got);
        Sync.Result(pendingSend);
        Assert.False(idle.TryReceive(out _));
        Assert.False(ready.TryReceive(out _));
    }

    [Fact]
    public void Select_OneSendReady_DeliversOnlyThroughTheReadyCase()
    {
        if (IsUnbounded)
        {
            return; // every send on an unbounded channel is ready
        }

        Chan<int> blocked = Create<int>();
        Fill(blocked);
        Chan<int> open = Create<int>();
        Job<int> receiver = Capacity == 0 ? open.ReceiveAsync() : default;

        int fired = Sync.Result(Select.Send(blocked, 1).Send(open, 2).AsJob());

        Assert.Equal(1, fired);
        Assert.Equal(2, Capacity == 0 ? Sync.Result(receiver) : Sync.Result(open.ReceiveAsync()));
        for (int i = 0; i < Capacity; i++)
        {
            Assert.Equal(-100 - i, Sync.Result(blocked.ReceiveAsync())); // only what filled it
        }

        Assert.False(blocked.TryReceive(out _));
    }

    [Fact]
    public void Select_NoneReady_DefaultFiresAndTakesNothing()
    {
        Chan<int> a = Create<int>();
        Chan<int> b = Create<int>();
        SelectBuilder select = Select.Receive(a);
        if (!IsUnbounded)
        {
            Fill(b);
            select = select.Send(b, 5);
        }

        bool defaulted = false;
        int fired = Sync.Result(select.Default(() => defaulted = true).AsJob());

        Assert.Equal(IsUnbounded ? 1 : 2, fired);
        Assert.True(defaulted);
        Assert.Equal(IsUnbounded ? 0 : Capacity, b.Count); // the send case delivered nothing
        Assert.False(a.TryReceive(out _));
    }

    [Fact]
    public void Select_NoneReady_TimeoutFiresAndLeavesNoCaseBehind()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Chan<int> ch = Create<int>();

        int fired = Bounded.Run(runtime, async () => await Select.Receive(ch).Timeout(TimeSpan.FromMilliseconds(10)));

        Assert.Equal(1, fired);
        Job<int> receiver = ch.ReceiveAsync();
        Sync.Result(ch.SendAsync(3)); // goes to the new receiver: the select's case is gone
        Assert.Equal(3, Sync.Result(receiver));
    }

    [Fact]
    public void Select_Waiting_LosingCaseTakesNothing()
    {
        Chan<int> a = Create<int>();
        Chan<int> b = Create<int>();
        Job<int> select = Select.Receive(a).Receive(b).AsJob();
        Assert.False(select.IsCompleted);

        Job first = a.SendAsync(1);
        Job second = b.SendAsync(2); // after the select committed to a

        Assert.Equal(0, Sync.Result(select));
        Sync.Result(first);
        Assert.Equal(2, Sync.Result(b.ReceiveAsync()));
        Sync.Result(second);
    }

    [Fact]
    public void Select_CanceledWhileWaiting_RemovedWithoutLosingItems()
    {
        Chan<int> ch = Create<int>();
        using var cts = new CancellationTokenSource();
        Job<int> select = Select.Receive(ch, _ => Assert.Fail("canceled")).WithCancellation(cts.Token).AsJob();
        Job<int> next = ch.ReceiveAsync();

        cts.Cancel();
        Job send = ch.SendAsync(4);

        Assert.Throws<OperationCanceledException>(() => select.GetAwaiter().GetResult());
        Assert.Equal(4, Sync.Result(next));
        Sync.Result(send);
    }

    [Fact]
    public void ReadAllAsync_ClosedAfterSends_YieldsEveryItemThenEnds()
    {
        Chan<int> ch = Create<int>();
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        List<int> items = Bounded.Run(runtime, async () =>
        {
            Job producer = runtime.Spawn(ch, static async c =>
            {
                for (int i = 0; i < 200; i++)
                {
                    await c.SendAsync(i);
                }

                c.Close();
            });
            var seen = new List<int>();
            await foreach (int item in ch.ReadAllAsync())
            {
                seen.Add(item);
            }

            await producer;
            return seen;
        });

        Assert.Equal(200, items.Count);
        for (int i = 0; i < 200; i++)
        {
            Assert.Equal(i, items[i]);
        }
    }

    [Fact]
    public void ReadAllAsync_ClosedWithError_ThrowsAfterLastItem()
    {
        Chan<int> ch = Create<int>();
        using var runtime = new CurrentThreadRuntime();
        var seen = new List<int>();
        Bounded.Run(runtime, async () =>
        {
            Job producer = runtime.Spawn(ch, static async c =>
            {
                await c.SendAsync(1);
                await c.SendAsync(2);
                c.Close(new FormatException("bad input"));
            });
            await Assert.ThrowsAsync<FormatException>(async () =>
            {
                await foreach (int item in ch.ReadAllAsync())
                {
                    seen.Add(item);
                }
            });
            await producer;
        });

        Assert.Equal([1, 2], seen);
    }
}
