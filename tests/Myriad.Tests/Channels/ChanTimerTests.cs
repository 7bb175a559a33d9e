using System;
using System.Threading;
using Myriad.Channels;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>Chan.After and tickers.</summary>
public sealed class ChanTimerTests
{
    [Fact]
    public void After_Delay_ReceivesTheTimeOnce()
    {
        DateTimeOffset start = DateTimeOffset.UtcNow;
        ReceiveOnlyChan<DateTimeOffset> after = Chan.After(TimeSpan.FromMilliseconds(20));
        DateTimeOffset fired = after.ReceiveAsync().Wait();
        Assert.True(fired >= start);
        Thread.Sleep(50);
        Assert.False(after.TryReceive(out _));
    }

    [Fact]
    public void After_InSelect_FiresAsATimeoutCase()
    {
        var never = Chan.Unbuffered<int>();
        Assert.Equal(1, Select.Receive(never).Receive(Chan.After(TimeSpan.FromMilliseconds(10))).AsJob().Wait());
    }

    [Fact]
    public void After_BadDelay_ThrowsArgumentOutOfRange()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => Chan.After(TimeSpan.FromMilliseconds(-2)));
        Assert.False(Chan.After(Timeout.InfiniteTimeSpan).TryReceive(out _));
    }

    [Fact]
    public void Ticker_Ticks_ThenStopEndsTheTicks()
    {
        using var runtime = new CurrentThreadRuntime();
        int ticks = runtime.Run(runtime, static async rt =>
        {
            using Ticker ticker = Chan.Ticker(TimeSpan.FromMilliseconds(5));
            int count = 0;
            while (count < 3)
            {
                await ticker.Channel.ReceiveAsync();
                count++;
            }

            ticker.Stop();
            ticker.Channel.TryReceive(out _); // one tick may have been in flight
            await Job.Delay(TimeSpan.FromMilliseconds(40));
            ticker.Channel.TryReceive(out _);
            await Job.Delay(TimeSpan.FromMilliseconds(40));
            Assert.False(ticker.Channel.TryReceive(out _), "a stopped ticker kept ticking");
            return count;
        });
        Assert.Equal(3, ticks);
    }

    [Fact]
    public void Dispose_Twice_IsIdempotent()
    {
        var ticker = Chan.Ticker(TimeSpan.FromHours(1));
        Assert.Equal(TimeSpan.FromHours(1), ticker.Period);
        ticker.Dispose();
        ticker.Dispose();
        Assert.False(ticker.Channel.TryReceive(out _));
    }

    [Fact]
    public void Ticker_BadPeriod_ThrowsArgumentOutOfRange()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => Chan.Ticker(TimeSpan.Zero));
        Assert.Throws<ArgumentOutOfRangeException>(() => Chan.Ticker(Timeout.InfiniteTimeSpan));
    }
}

/// <summary>A ticker stopped while it ticks fast, from another thread, many times: it must end up unscheduled.</summary>
[Collection(Support.HeavyCollection.Name)]
public sealed class ChanTimerStressTests
{
    [Fact]
    public void Ticker_StopRacesTicks_NeverStaysScheduled()
    {
        for (int round = 0; round < 200; round++)
        {
            var ticker = Chan.Ticker(TimeSpan.FromTicks(1000)); // 0.1 ms: ticks race the stop
            Thread.SpinWait(round * 50);
            ticker.Stop();
            Thread.Sleep(1);
            ticker.Channel.TryReceive(out _);
            Thread.Sleep(2);
            ticker.Channel.TryReceive(out _);
            Thread.Sleep(5);
            Assert.False(ticker.Channel.TryReceive(out _), $"round {round}: the ticker ticked after Stop");
        }
    }
}
