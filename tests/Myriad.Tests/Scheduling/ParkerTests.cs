using System.Threading;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Scheduling;

public class ParkerTests
{
    [Fact]
    public void Unpark_BeforePark_ParkReturnsImmediately()
    {
        var parker = new Parker();
        parker.Unpark();
        Assert.True(parker.Park(millisecondsTimeout: 10_000));
    }

    [Fact]
    public void Park_WithTimeoutAndNoPermit_ReturnsFalse()
    {
        Assert.False(new Parker().Park(millisecondsTimeout: 10));
    }

    [Fact]
    [Trait("Category", "Stress")]
    public void ParkUnpark_PingPong_NoLostWakeups()
    {
        var a = new Parker();
        var b = new Parker();
        const int rounds = 50_000;
        var other = new Thread(() =>
        {
            for (int i = 0; i < rounds; i++)
            {
                a.Park();
                b.Unpark();
            }
        });
        other.Start();
        for (int i = 0; i < rounds; i++)
        {
            a.Unpark();
            b.Park();
        }

        Assert.True(other.Join(30_000));
    }
}
