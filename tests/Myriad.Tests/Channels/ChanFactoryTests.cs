using System;
using Myriad.Channels;
using Xunit;

namespace Myriad.Tests.Channels;

public sealed class ChanFactoryTests
{
    [Fact]
    public void Bounded_NegativeCapacity_ThrowsArgumentOutOfRange()
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => Chan.Bounded<int>(-1));
        Assert.Equal("capacity", e.ParamName);
    }

    [Fact]
    public void Bounded_ZeroCapacity_IsUnbuffered()
    {
        Chan<int> ch = Chan.Bounded<int>(0);
        Assert.Equal(0, ch.Capacity);
        Assert.False(ch.TrySend(1)); // no receiver: a rendezvous channel buffers nothing
    }

    [Fact]
    public void Unbounded_Capacity_IsIntMaxValue()
    {
        Assert.Equal(int.MaxValue, Chan.Unbounded<int>().Capacity);
    }
}
