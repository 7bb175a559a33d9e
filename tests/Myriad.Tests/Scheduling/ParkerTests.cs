using System;
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
    public void Park_SpinningWithTimeoutAndNoPermit_SleepsAfterTheSpinAndReturnsFalse()
    {
        var parker = new Parker(TimeSpan.FromMilliseconds(1));
        Assert.False(parker.Park(millisecondsTimeout: 10));
        parker.Unpark();
        Assert.True(parker.Park(millisecondsTimeout: 10_000)); // the permit is still honoured after a spin that found none
    }

    [Fact]
    public void Park_SpinningWhenTheUnparkComesDuringTheSpin_ConsumesThePermit()
    {
        // A long spin, so that the unpark lands inside it: the permit is taken there, and no
        // permit is left over for the next park.
        var parker = new Parker(TimeSpan.FromMilliseconds(10));
        var unparker = new Thread(() =>
        {
            Thread.Sleep(1);
            parker.Unpark();
        });
        unparker.Start();
        Assert.True(parker.Park());
        unparker.Join();
        Assert.False(parker.Park(millisecondsTimeout: 20));
    }

    [Theory]
    [Trait("Category", "Stress")]
    [InlineData(0)]
    [InlineData(50)]
    [InlineData(2_000)]
    public void ParkUnpark_PingPong_NoLostWakeups(int spinMicroseconds)
    {
        var a = new Parker(TimeSpan.FromMicroseconds(spinMicroseconds));
        var b = new Parker(TimeSpan.FromMicroseconds(spinMicroseconds));
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
