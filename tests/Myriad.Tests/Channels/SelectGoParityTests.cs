using System;
using System.Collections.Generic;
using System.Threading;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>Null channels, state-passing handlers, the value-returning form and builder copies.</summary>
public sealed class SelectGoParityTests
{
    [Fact]
    public void Receive_NullChannel_CaseNeverFiresAndKeepsItsIndex()
    {
        Chan<int>? off = null;
        var on = Chan.Bounded<int>(1);
        on.TrySend(5);
        int got = 0;
        int fired = Sync.Result(Select.Receive(off, static _ => throw new InvalidOperationException("a disabled case fired"))
            .Receive(on, v => got = v)
            .Send(off, 1)
            .AsJob());
        Assert.Equal(1, fired);
        Assert.Equal(5, got);
    }

    [Fact]
    public void Select_NullChannelAndDefault_DefaultFires()
    {
        Chan<int>? off = null;
        Assert.Equal(1, Sync.Result(Select.Receive(off).Default().AsJob()));
    }

    [Fact]
    public void Select_EveryChannelNullNoTimeout_ThrowsInsteadOfWaitingForever()
    {
        Chan<int>? off = null;
        Assert.Throws<InvalidOperationException>(() => Select.Receive(off).ReceiveOk(off).AsJob());
    }

    [Fact]
    public void Select_EveryChannelNullWithTimeout_TimeoutFires()
    {
        Chan<int>? off = null;
        Assert.Equal(1, Select.Receive(off).Timeout(TimeSpan.FromMilliseconds(5)).AsJob().Wait());
    }

    [Fact]
    public void Select_NullChannelWithCanceledToken_ThrowsOperationCanceled()
    {
        Chan<int>? off = null;
        using var cts = new CancellationTokenSource();
        Job<int> select = Select.Receive(off).WithCancellation(cts.Token).AsJob();
        cts.Cancel();
        Assert.Throws<OperationCanceledException>(() => select.Wait());
    }

    [Fact]
    public void AwaitOlderCopy_AfterCaseAddedThroughNewerCopy_Throws()
    {
        var a = Chan.Bounded<int>(1);
        var b = Chan.Bounded<int>(1);
        SelectBuilder first = Select.Receive(a);
        SelectBuilder second = first.Receive(b);
        Assert.Throws<InvalidOperationException>(() => first.AsJob());
        Assert.Throws<InvalidOperationException>(() => first.Receive(b));
        b.TrySend(1);
        Assert.Equal(1, Sync.Result(second.AsJob()));
    }

    [Fact]
    public void AwaitOlderCopy_AfterWithCancellationOnNewerCopy_Throws()
    {
        var a = Chan.Bounded<int>(1);
        SelectBuilder first = Select.Receive(a).Default();
        SelectBuilder second = first.WithCancellation(CancellationToken.None);
        Assert.Throws<InvalidOperationException>(() => first.AsJob());
        Assert.Equal(1, Sync.Result(second.AsJob()));
    }

    [Fact]
    public void Receive_StatePassingHandler_GetsStateAndValue()
    {
        var ch = Chan.Bounded<int>(1);
        ch.TrySend(7);
        var sink = new List<int>();
        Sync.Result(Select.Receive(ch, sink, static (list, v) => list.Add(v)).AsJob());
        Assert.Equal([7], sink);
    }

    [Fact]
    public void ReceiveOk_StatePassingHandler_ClosedChannelReportsNotOk()
    {
        var ch = Chan.Bounded<int>(1);
        ch.Close();
        var seen = new List<ReceiveResult<int>>();
        Sync.Result(Select.ReceiveOk(ch, seen, static (list, r) => list.Add(r)).AsJob());
        Assert.False(Assert.Single(seen).Ok);
    }

    [Fact]
    public void Send_StatePassingHandler_RunsWithState()
    {
        var ch = Chan.Bounded<string>(1);
        var flag = new StrongBox<bool>();
        Sync.Result(Select.Send(ch, "x", flag, static f => f.Value = true).AsJob());
        Assert.True(flag.Value);
        Assert.True(ch.TryReceive(out string? got));
        Assert.Equal("x", got);
    }

    [Fact]
    public void Receive_StatePassingNullHandler_ThrowsArgumentNull()
    {
        var ch = Chan.Bounded<int>(1);
        Assert.Throws<ArgumentNullException>(() => Select.Receive(ch, 0, (Action<int, int>)null!));
    }

    [Fact]
    public void AsJobOfT_ReceiveFires_ReturnsIndexAndValue()
    {
        var quit = Chan.Unbuffered<bool>();
        var lines = Chan.Bounded<string>(1);
        lines.TrySend("hello");
        (int fired, string value) = Sync.Result(Select.Receive(quit).Receive(lines).AsJob<string>());
        Assert.Equal(1, fired);
        Assert.Equal("hello", value);
    }

    [Fact]
    public void AsJobOfT_WaitsThenReceives_ReturnsTheValueAfterAwait()
    {
        using var runtime = new CurrentThreadRuntime();
        SelectResult<int> result = runtime.Run(runtime, static async rt =>
        {
            var ch = Chan.Unbuffered<int>();
            Job<SelectResult<int>> select = Select.Receive(ch).Timeout(TimeSpan.FromSeconds(30)).AsJob<int>();
            rt.SpawnDetached(ch, static c => c.SendAsync(42));
            return await select;
        });
        Assert.Equal(0, result.Index);
        Assert.True(result.Received);
        Assert.Equal(42, result.Value);
    }

    [Fact]
    public void AsJobOfT_NoReceiveCaseOfThatType_ThrowsAndTakesNothing()
    {
        // AsJob<ReceiveResult<long>>() for a ReceiveOk case on a Chan<long> once took the item and
        // returned nothing: it was lost. Now the select refuses to run, naming the misuse.
        var ch = Chan.Bounded<long>(1);
        ch.TrySend(42);
        var error = Assert.Throws<InvalidOperationException>(() => Select.ReceiveOk(ch).AsJob<ReceiveResult<long>>());
        Assert.Contains("AsJob<ReceiveResult<Int64>>", error.Message);
        Assert.Throws<InvalidOperationException>(() => Select.Receive(ch).Default().AsJob<int>());
        Assert.Equal(1, ch.Count); // still there

        // A receive case of another type beside one of T is fine (a signal channel beside the data).
        var quit = Chan.Bounded<bool>(1);
        quit.TrySend(true);
        SelectResult<long> r = Sync.Result(Select.Receive(quit).ReceiveOk(Chan.Unbuffered<long>()).AsJob<long>());
        Assert.Equal(0, r.Index);
        Assert.False(r.Received);

        // A select of sends only has nothing to receive: any T will do.
        var sink = Chan.Bounded<string>(1);
        Assert.Equal(0, Sync.Result(Select.Send(sink, "x").AsJob<int>()).Index);
    }

    [Fact]
    public void AsJobOfT_DefaultFires_NothingReceived()
    {
        var ch = Chan.Unbuffered<int>();
        SelectResult<int> r = Sync.Result(Select.Receive(ch).Default().AsJob<int>());
        Assert.Equal(1, r.Index);
        Assert.False(r.Received);
    }

    [Fact]
    public void SelectInLoop_StatePassingHandlers_AllocateNothingInSteadyState()
    {
        var ch = Chan.Bounded<int>(1);
        var sum = new StrongBox<long>();
        long bytes = TestHelpers.SteadyStateAllocations(() =>
        {
            for (int i = 0; i < 1000; i++)
            {
                ch.TrySend(i);
                Select.Receive(ch, sum, static (s, v) => s.Value += v).AsJob().Wait();
                ch.TrySend(i);
                Select.Receive(ch).Default().AsJob<int>().Wait();
            }
        });
        Assert.Equal(0, bytes);
    }

    private sealed class StrongBox<T>
    {
        public T Value = default!;
    }
}
