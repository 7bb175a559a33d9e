using Myriad.Coordination;
using Xunit;

namespace Myriad.Tests.Coordination;

/// <summary>The deadline and the slot of a timer node share one word; each must survive writes of the other.</summary>
public sealed class TimerLinksTests
{
    private const int LastSlotPlusOne = TimerWheel.Levels * TimerWheel.SlotsPerLevel;

    [Theory]
    [InlineData(0L)]
    [InlineData(1L)]
    [InlineData(4_294_967_294L)] // the longest delay accepted, in milliseconds
    [InlineData((1L << 53) - 1)] // the largest deadline the word holds
    [InlineData(-1L)]
    [InlineData(-(1L << 53))]
    public void Deadline_WrittenAroundSlotWrites_BothReadBackUnchanged(long deadline)
    {
        var links = default(TimerLinks);
        links.SlotPlusOne = LastSlotPlusOne;
        links.Deadline = deadline;
        Assert.Equal(deadline, links.Deadline);
        Assert.Equal(LastSlotPlusOne, links.SlotPlusOne);

        links.SlotPlusOne = 0;
        Assert.Equal(deadline, links.Deadline);
        Assert.Equal(-1, links.Slot);

        links.SlotPlusOne = 1;
        links.Deadline = deadline ^ 0x55;
        Assert.Equal(deadline ^ 0x55, links.Deadline);
        Assert.Equal(0, links.Slot);
    }

    [Fact]
    public void DefaultLinks_Idle_HaveNoSlot()
    {
        var links = default(TimerLinks);
        Assert.Equal(-1, links.Slot);
        Assert.Equal(0, links.Deadline);
    }
}
