using System;
using System.Threading;
using Myriad;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
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
    public void After_ZeroDelay_HoldsTheTimeAtOnce()
    {
        // It used to wait for the timer wheel's next tick (about 1.3 ms a call).
        DateTimeOffset start = DateTimeOffset.UtcNow;
        Assert.True(Chan.After(TimeSpan.Zero).TryReceive(out DateTimeOffset fired));
        Assert.True(fired >= start);
    }

    [Fact]
    public void After_ZeroDelayOnADeterministicRuntime_SendsTheVirtualTime()
    {
        using var runtime = new DeterministicRuntime(1);
        DateTimeOffset now = runtime.TimeProvider.GetUtcNow();
        DateTimeOffset sent = runtime.Run(static () =>
        {
            Assert.True(Chan.After(TimeSpan.Zero).TryReceive(out DateTimeOffset t));
            return Job.FromResult(t);
        });
        Assert.Equal(now, sent);
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
    public void Ticker_OnADeterministicRuntime_TicksEveryPeriodOfItsVirtualClockAndSendsThatClocksTime()
    {
        using var runtime = new DeterministicRuntime(seed: 7);
        (TimeSpan Elapsed, TimeSpan Sent)[] ticks = runtime.Run(runtime, static async rt =>
        {
            DateTimeOffset start = rt.TimeProvider.GetUtcNow();
            var seen = new (TimeSpan, TimeSpan)[5];
            using Ticker ticker = Chan.Ticker(TimeSpan.FromSeconds(1));
            for (int i = 0; i < seen.Length; i++)
            {
                DateTimeOffset sent = await ticker.Channel.ReceiveAsync();
                seen[i] = (rt.TimeProvider.GetUtcNow() - start, sent - start);
            }

            return seen;
        });

        for (int i = 0; i < ticks.Length; i++)
        {
            // Virtual time: each tick lands exactly one period after the previous one, and carries
            // the virtual clock's time, not the wall clock's.
            Assert.Equal(TimeSpan.FromSeconds(i + 1), ticks[i].Elapsed);
            Assert.Equal(TimeSpan.FromSeconds(i + 1), ticks[i].Sent);
        }
    }

    [Theory]
    [InlineData(40)]
    [InlineData(1)] // whole days land on midnight of year 10000, one millisecond past the last instant
    public void Ticker_NeverStoppedBesideAStuckJob_ThrowsAClearErrorBeforeVirtualTimeOverflows(int periodDays)
    {
        // The ticker keeps the virtual clock moving (so no deadlock is reported) while the job
        // waits forever; with a long period the clock reaches DateTimeOffset's end within seconds.
        using var runtime = new DeterministicRuntime(seed: 5);
        var nobodySends = Chan.Unbuffered<int>();
        var error = Assert.Throws<InvalidOperationException>(() => Bounded.Run(runtime, async () =>
        {
            Ticker ticker = Chan.Ticker(TimeSpan.FromDays(periodDays));
            await nobodySends.ReceiveAsync();
            ticker.Stop();
        }, TimeSpan.FromSeconds(60)));
        Assert.Contains("Virtual time would pass", error.Message);
        Assert.Contains("ticker", error.Message);
    }

    [Fact]
    public void After_OnADeterministicRuntime_SendsTheVirtualClocksTime()
    {
        using var runtime = new DeterministicRuntime(seed: 3);
        TimeSpan sentAfter = runtime.Run(runtime, static async rt =>
        {
            DateTimeOffset start = rt.TimeProvider.GetUtcNow();
            DateTimeOffset sent = await Chan.After(TimeSpan.FromHours(2)).ReceiveAsync();
            return sent - start;
        });
        Assert.Equal(TimeSpan.FromHours(2), sentAfter);
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

    [Fact]
    public void Ticker_PeriodTooLong_MessageOffersOnlyWhatATickerTakes()
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => Chan.Ticker(TimeSpan.MaxValue));
        Assert.Equal("period", error.ParamName);
        Assert.Contains("ticker", error.Message);
        Assert.DoesNotContain("InfiniteTimeSpan", error.Message);
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
