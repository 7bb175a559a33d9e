using System;
using Myriad.Channels;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>Send-only and receive-only views of a channel.</summary>
public sealed class ChanViewTests
{
    private static void Produce(SendOnlyChan<int> output)
    {
        output.TrySend(1);
        output.Close();
    }

    private static int ConsumeOne(ReceiveOnlyChan<int> input) => input.TryReceive(out int v) ? v : -1;

    [Fact]
    public void Views_ConvertImplicitly_ProduceAndConsumeTheSameChannel()
    {
        var ch = Chan.Bounded<int>(2);
        Produce(ch);
        Assert.Equal(1, ConsumeOne(ch));
        Assert.True(ch.ReceiveOnly.IsCompleted);
        Assert.True(ch.SendOnly.IsClosed);
        Assert.True(ch.ReceiveOnly == new ReceiveOnlyChan<int>(ch));
    }

    [Fact]
    public void DefaultView_Members_ThrowInvalidOperation()
    {
        ReceiveOnlyChan<int> none = default;
        Assert.True(none.IsNull);
        Assert.Throws<InvalidOperationException>(() => none.TryReceive(out _));
        Assert.Throws<InvalidOperationException>(() => default(SendOnlyChan<int>).TrySend(1));
    }

    [Fact]
    public void Select_OnViews_ReceivesAndSends()
    {
        var input = Chan.Bounded<int>(1);
        var output = Chan.Bounded<int>(1);
        input.TrySend(3);
        ReceiveOnlyChan<int> from = input;
        SendOnlyChan<int> to = output;
        int got = 0;
        Assert.Equal(0, Sync.Result(Select.Receive(from, v => got = v).AsJob()));
        Assert.Equal(0, Sync.Result(Select.Send(to, got * 2).AsJob()));
        Assert.True(output.TryReceive(out int sent));
        Assert.Equal(6, sent);
    }

    [Fact]
    public void Select_DefaultView_CaseDisabled()
    {
        ReceiveOnlyChan<int> none = default;
        Assert.Equal(1, Sync.Result(Select.Receive(none).Default().AsJob()));
    }
}
