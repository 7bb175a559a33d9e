using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Channels;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// Go's channel rules, run against every kind of channel (one derived class per kind). Tests that
/// need no runtime drive everything synchronously: a waiting job is completed inline by the operation
/// that releases it.
/// </summary>
public abstract partial class ChanContractTests
{
    /// <summary>The buffer size of the kind under test (0 unbuffered, int.MaxValue unbounded).</summary>
    protected abstract int Capacity { get; }

    protected abstract Chan<T> Create<T>();

    private bool IsUnbounded => Capacity == int.MaxValue;

    /// <summary>How many sends complete without a receiver (capped for the unbounded kind).</summary>
    private int SendsThatDoNotWait => IsUnbounded ? 100 : Capacity;

    [Fact]
    public void Create_Properties_DescribeKind()
    {
        Chan<int> ch = Create<int>();
        Assert.Equal(Capacity, ch.Capacity);
        Assert.Equal(0, ch.Count);
        Assert.False(ch.IsClosed);
        Assert.False(ch.IsCompleted);
    }

    [Fact]
    public void SendAsync_ReceiverWaiting_HandsItemOverAtOnce()
    {
        Chan<int> ch = Create<int>();
        Job<int> receive = ch.ReceiveAsync();
        Assert.False(receive.IsCompleted);

        Sync.Result(ch.SendAsync(42));

        Assert.Equal(42, Sync.Result(receive));
        Assert.Equal(0, ch.Count);
    }

    [Fact]
    public void SendAsync_NoReceiver_WaitsOnlyOnceBufferIsFull()
    {
        Chan<int> ch = Create<int>();
        for (int i = 0; i < SendsThatDoNotWait; i++)
        {
            Sync.Result(ch.SendAsync(i));
        }

        if (IsUnbounded)
        {
            Assert.Equal(SendsThatDoNotWait, ch.Count);
            return;
        }

        Job blocked = ch.SendAsync(-1);
        Assert.False(blocked.IsCompleted);

        // A receive frees a slot: the waiting sender's item moves into the buffer and its send completes.
        Assert.Equal(Capacity == 0 ? -1 : 0, Sync.Result(ch.ReceiveAsync()));
        Sync.Result(blocked);
    }

    [Fact]
    public void ReceiveAsync_ItemsSentOneByOne_ComeOutInFifoOrder()
    {
        Chan<int> ch = Create<int>();
        const int Count = 50;
        var sends = new List<Job>();
        for (int i = 0; i < Count; i++)
        {
            sends.Add(ch.SendAsync(i));
        }

        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(i, Sync.Result(ch.ReceiveAsync()));
        }

        foreach (Job send in sends)
        {
            Sync.Result(send);
        }
    }

    [Fact]
    public void ReceiveAsync_SeveralReceiversWaiting_ServedInFifoOrder()
    {
        Chan<int> ch = Create<int>();
        Job<int> first = ch.ReceiveAsync();
        Job<int> second = ch.ReceiveAsync();
        Job<ReceiveResult<int>> third = ch.ReceiveOkAsync();

        Sync.Result(ch.SendAsync(1));
        Sync.Result(ch.SendAsync(2));
        Sync.Result(ch.SendAsync(3));

        Assert.Equal(1, Sync.Result(first));
        Assert.Equal(2, Sync.Result(second));
        Assert.Equal((3, true), Sync.Result(third) is var (v, ok) ? (v, ok) : default);
    }

    [Fact]
    public void Close_ReceiversWaiting_WakesEveryOne()
    {
        Chan<string> ch = Create<string>();
        var plain = new List<Job<string>>();
        var ok = new List<Job<ReceiveResult<string>>>();
        for (int i = 0; i < 10; i++)
        {
            plain.Add(ch.ReceiveAsync());
            ok.Add(ch.ReceiveOkAsync());
        }

        ch.Close();

        foreach (Job<string> job in plain)
        {
            Assert.True(job.IsCompleted);
            Assert.Throws<ChannelClosedException>(() => job.GetAwaiter().GetResult());
        }

        foreach (Job<ReceiveResult<string>> job in ok)
        {
            ReceiveResult<string> result = Sync.Result(job);
            Assert.False(result.Ok);
            Assert.Null(result.Value);
        }
    }

    [Fact]
    public void ReceiveAsync_AfterClose_DrainsBufferThenReportsClosed()
    {
        Chan<int> ch = Create<int>();
        int buffered = Math.Min(SendsThatDoNotWait, 5);
        for (int i = 0; i < buffered; i++)
        {
            Sync.Result(ch.SendAsync(i));
        }

        ch.Close();
        Assert.True(ch.IsClosed);
        Assert.Equal(buffered == 0, ch.IsCompleted);

        for (int i = 0; i < buffered; i++)
        {
            Assert.Equal((i, true), Sync.Result(ch.ReceiveOkAsync()) is var (v, ok) ? (v, ok) : default);
        }

        Assert.True(ch.IsCompleted);
        Assert.False(Sync.Result(ch.ReceiveOkAsync()).Ok);
        Job<int> receive = ch.ReceiveAsync();
        Assert.Throws<ChannelClosedException>(() => receive.GetAwaiter().GetResult());
        Assert.False(ch.TryReceive(out _));
    }

    [Fact]
    public void SendAsync_ClosedChannel_ThrowsChannelClosed()
    {
        Chan<int> ch = Create<int>();
        ch.Close();

        Job send = ch.SendAsync(1);
        Assert.Throws<ChannelClosedException>(() => send.GetAwaiter().GetResult());
        Assert.Throws<ChannelClosedException>(() => ch.TrySend(1));
    }

    [Fact]
    public void Close_Twice_ThrowsInvalidOperation()
    {
        Chan<int> ch = Create<int>();
        ch.Close();

        var e = Assert.Throws<InvalidOperationException>(() => ch.Close());
        Assert.IsNotType<ChannelClosedException>(e);
    }

    [Fact]
    public void Close_WithError_ReceiversGetErrorAfterDraining()
    {
        Chan<int> ch = Create<int>();
        Job<int> waiting = ch.ReceiveAsync();
        var error = new TimeoutException("upstream failed");

        ch.Close(error);

        Assert.Same(error, Assert.Throws<TimeoutException>(() => waiting.GetAwaiter().GetResult()));
        Job<ReceiveResult<int>> ok = ch.ReceiveOkAsync();
        Assert.Same(error, Assert.Throws<TimeoutException>(() => ok.GetAwaiter().GetResult()));
        Job send = ch.SendAsync(1);
        Assert.Same(error, Assert.Throws<ChannelClosedException>(() => send.GetAwaiter().GetResult()).InnerException);
    }

    [Fact]
    public void Close_WithError_BufferedItemsStillDelivered()
    {
        if (Capacity == 0)
        {
            return; // nothing can be buffered
        }

        Chan<int> ch = Create<int>();
        Sync.Result(ch.SendAsync(7));
        ch.Close(new FormatException());

        Assert.Equal(7, Sync.Result(ch.ReceiveAsync()));
        Job<int> after = ch.ReceiveAsync();
        Assert.Throws<FormatException>(() => after.GetAwaiter().GetResult());
    }

    [Fact]
    public void Close_SendersWaiting_SendersThrowAndItemsAreNotDelivered()
    {
        if (IsUnbounded)
        {
            return; // sends never wait
        }

        Chan<int> ch = Create<int>();
        for (int i = 0; i < Capacity; i++)
        {
            Sync.Result(ch.SendAsync(i));
        }

        Job blocked = ch.SendAsync(-1);
        ch.Close();

        Assert.True(blocked.IsCompleted);
        Assert.Throws<ChannelClosedException>(() => blocked.GetAwaiter().GetResult());
        for (int i = 0; i < Capacity; i++)
        {
            Assert.Equal(i, Sync.Result(ch.ReceiveAsync()));
        }

        Assert.False(Sync.Result(ch.ReceiveOkAsync()).Ok);
    }

    [Fact]
    public void ReceiveAsync_CanceledWhileWaiting_RemovedWithoutLosingNextItem()
    {
        Chan<int> ch = Create<int>();
        using var cts = new CancellationTokenSource();
        Job<int> canceled = ch.ReceiveAsync(cts.Token);
        Job<int> next = ch.ReceiveAsync();

        cts.Cancel();

        Assert.True(canceled.IsCompleted);
        Assert.Throws<OperationCanceledException>(() => canceled.GetAwaiter().GetResult());
        Sync.Result(ch.SendAsync(5));
        Assert.Equal(5, Sync.Result(next));
    }

    [Fact]
    public void SendAsync_CanceledWhileWaiting_ItemIsNeverDelivered()
    {
        if (IsUnbounded)
        {
            return; // sends never wait
        }

        Chan<int> ch = Create<int>();
        for (int i = 0; i < Capacity; i++)
        {
            Sync.Result(ch.SendAsync(i));
        }

        using var cts = new CancellationTokenSource();
        Job canceled = ch.SendAsync(-1, cts.Token);
        Job after = ch.SendAsync(-2);
        cts.Cancel();

        Assert.Throws<OperationCanceledException>(() => canceled.GetAwaiter().GetResult());
        for (int i = 0; i < Capacity; i++)
        {
            Assert.Equal(i, Sync.Result(ch.ReceiveAsync()));
        }

        Assert.Equal(-2, Sync.Result(ch.ReceiveAsync()));
        Sync.Result(after);
        Assert.False(ch.TryReceive(out _));
    }

    [Fact]
    public void ReceiveAsync_TokenAlreadyCanceled_CompletesCanceledWithoutTakingItem()
    {
        Chan<int> ch = Create<int>();
        if (SendsThatDoNotWait > 0)
        {
            Sync.Result(ch.SendAsync(1));
        }

        Job<int> receive = ch.ReceiveAsync(new CancellationToken(canceled: true));

        Assert.Throws<OperationCanceledException>(() => receive.GetAwaiter().GetResult());
        Assert.Equal(SendsThatDoNotWait > 0 ? 1 : 0, ch.Count);
    }

    [Fact]
    public void ReceiveAsync_CanceledAfterItemArrived_KeepsItem()
    {
        Chan<int> ch = Create<int>();
        using var cts = new CancellationTokenSource();
        Job<int> receive = ch.ReceiveAsync(cts.Token);
        Sync.Result(ch.SendAsync(9));

        cts.Cancel();

        Assert.Equal(9, Sync.Result(receive));
    }

    [Fact]
    public void TrySend_TryReceive_NeverWait()
    {
        Chan<int> ch = Create<int>();
        Assert.False(ch.TryReceive(out _));
        for (int i = 0; i < SendsThatDoNotWait; i++)
        {
            Assert.True(ch.TrySend(i));
        }

        if (!IsUnbounded)
        {
            Assert.False(ch.TrySend(-1)); // full (unbuffered: no receiver)
        }

        for (int i = 0; i < SendsThatDoNotWait; i++)
        {
            Assert.True(ch.TryReceive(out int item));
            Assert.Equal(i, item);
        }

        Assert.False(ch.TryReceive(out _));
    }

    [Fact]
    public void TrySend_ReceiverWaiting_Succeeds()
    {
        Chan<int> ch = Create<int>();
        Job<int> receive = ch.ReceiveAsync();
        Assert.True(ch.TrySend(3));
        Assert.Equal(3, Sync.Result(receive));
    }

    [Fact]
    public void TryReceive_SenderWaiting_TakesItsItem()
    {
        if (IsUnbounded)
        {
            return;
        }

        Chan<int> ch = Create<int>();
        for (int i = 0; i < Capacity; i++)
        {
            Sync.Result(ch.SendAsync(i));
        }

        Job send = ch.SendAsync(100);
        var received = new List<int>();
        while (ch.TryReceive(out int item))
        {
            received.Add(item);
        }

        Sync.Result(send);
        Assert.Equal(100, received[^1]);
        Assert.Equal(Capacity + 1, received.Count);
    }

    [Fact]
    public void ReceiveAsync_StaleHandleAwaitedTwice_Throws()
    {
        Chan<int> ch = Create<int>();
        Job<int> receive = ch.ReceiveAsync();
        Sync.Result(ch.SendAsync(1));
        Assert.Equal(1, receive.GetAwaiter().GetResult());

        Assert.Throws<InvalidOperationException>(() => receive.GetAwaiter().GetResult());
    }

    /// <summary>Makes a receive on <paramref name="ch"/> ready: a buffered item, or (unbuffered) a waiting sender.</summary>
    private Job MakeReceiveReady(Chan<int> ch, int item) => ch.SendAsync(item);

    /// <summary>Makes a send on <paramref name="ch"/> impossible now: a full buffer (not for the unbounded kind).</summary>
    private void Fill(Chan<int> ch)
    {
        Assert.False(IsUnbounded, "an unbounded channel cannot be filled");
        for (int i = 0; i < Capacity; i++)
        {
            Sync.Result(ch.SendAsync(-100 - i));
        }
    }

    [Theory]
    [MemberData(nameof(Runtimes.All), MemberType = typeof(Runtimes))]
    public void PingPong_BetweenTwoJobs_EveryRoundTripArrives(string runtimeName)
    {
        using JobRuntime runtime = Runtimes.Create(runtimeName);
        Chan<int> ping = Create<int>();
        Chan<int> pong = Create<int>();
        const int Rounds = 10_000;
        long sum = Bounded.Run(runtime, async () =>
        {
            Job ponger = runtime.Spawn((ping, pong), static async s =>
            {
                await foreach (int v in s.ping.ReadAllAsync())
                {
                    await s.pong.SendAsync(v + 1);
                }
            });
            long total = 0;
            for (int i = 0; i < Rounds; i++)
            {
                await ping.SendAsync(i);
                total += await pong.ReceiveAsync();
            }

            ping.Close();
            await ponger;
            return total;
        });

        Assert.Equal((long)Rounds * (Rounds + 1) / 2, sum);
    }

    [Theory]
    [MemberData(nameof(Runtimes.All), MemberType = typeof(Runtimes))]
    public void Chain_HundredThousandHops_DoesNotOverflowTheStack(string runtimeName)
    {
        // Experiment E2's channel form: worker i receives from channel i and sends + 1 to channel i + 1.
        // The deterministic runtime picks each next job from anywhere in its queue (O(queue length)),
        // so it gets a shorter chain; still a hundred times deeper than the trampoline's inline limit.
        using JobRuntime runtime = Runtimes.Create(runtimeName);
        int N = runtime is DeterministicRuntime ? 5_000 : 100_000;
        int result = Bounded.Run(runtime, async () =>
        {
            Chan<int> first = Create<int>();
            Chan<int> left = first;
            for (int i = 0; i < N; i++)
            {
                Chan<int> right = Create<int>();
                runtime.SpawnDetached((left, right), static async s => await s.right.SendAsync(1 + await s.left.ReceiveAsync()));
                left = right;
            }

            await first.SendAsync(0);
            return await left.ReceiveAsync();
        });

        Assert.Equal(N, result);
    }

    [Fact]
    public void Close_HundredThousandWaitingReceivers_AllWakeWithoutStackOverflow()
    {
        const int N = 100_000;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Chan<int> ch = Create<int>();
        int woken = 0;
        Bounded.Run(runtime, async () =>
        {
            var jobs = new Job[N];
            for (int i = 0; i < N; i++)
            {
                jobs[i] = Wait(ch, () => Interlocked.Increment(ref woken));
            }

            ch.Close();
            await Job.WhenAll(jobs);
        });

        Assert.Equal(N, woken);

        static async Job Wait(Chan<int> ch, Action onClosed)
        {
            // Each waiter resumes another level deeper if continuations were nested: they must not be.
            var (_, ok) = await ch.ReceiveOkAsync();
            Assert.False(ok);
            onClosed();
        }
    }
}

public sealed class UnbufferedChanTests : ChanContractTests
{
    protected override int Capacity => 0;

    protected override Chan<T> Create<T>() => Chan.Unbuffered<T>();

    [Fact]
    public void SendAsync_NoReceiver_CompletesOnlyWhenReceiverTakesItem()
    {
        Chan<int> ch = Create<int>();
        Job send = ch.SendAsync(1);
        Assert.False(send.IsCompleted);
        Assert.Equal(0, ch.Count);

        Assert.Equal(1, Sync.Result(ch.ReceiveAsync()));
        Sync.Result(send);
    }
}

public sealed class Bounded1ChanTests : ChanContractTests
{
    protected override int Capacity => 1;

    protected override Chan<T> Create<T>() => Chan.Bounded<T>(1);
}

public sealed class Bounded16ChanTests : ChanContractTests
{
    protected override int Capacity => 16;

    protected override Chan<T> Create<T>() => Chan.Bounded<T>(16);
}

public sealed class UnboundedChanTests : ChanContractTests
{
    protected override int Capacity => int.MaxValue;

    protected override Chan<T> Create<T>() => Chan.Unbounded<T>();
}
