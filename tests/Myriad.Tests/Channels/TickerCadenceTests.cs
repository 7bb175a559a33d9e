using System;
using Microsoft.Extensions.Time.Testing;
using Myriad.Channels;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// When a tick is delivered late (its runtime was busy, its clock jumped, or the period is below the
/// timers' 1 ms resolution), the next tick goes to the next point of the ticker's cadence after now,
/// as Go's ticker does: a late tick is never followed at once by another one.
/// </summary>
public sealed class TickerCadenceTests
{
    [Fact]
    public void Ticker_ClockJumpsPastSeveralPeriods_NextTickWaitsForTheNextPointOfTheCadence()
    {
        var fake = new FakeTimeProvider();
        using var runtime = new CurrentThreadRuntime(new RuntimeOptions { TimeProvider = fake });
        DateTimeOffset start = fake.GetUtcNow();
        Ticker? ticker = null;
        var seen = Chan.Unbounded<TimeSpan>();
        runtime.SpawnDetached(async () =>
        {
            ticker = Chan.Ticker(TimeSpan.FromSeconds(1));
            while (true)
            {
                DateTimeOffset tick = await ticker.Channel.ReceiveAsync();
                seen.TrySend(tick - start);
            }
        });
        runtime.RunUntilIdle(); // the ticker is created and its first tick scheduled at 1 s

        fake.Advance(TimeSpan.FromSeconds(2.5)); // one tick (due at 1 s) fires late, at 2.5 s
        runtime.RunUntilIdle();
        Assert.True(seen.TryReceive(out TimeSpan first));
        Assert.Equal(TimeSpan.FromSeconds(2.5), first);
        Assert.False(seen.TryReceive(out TimeSpan extra), $"a second tick followed the late one at once, at {extra}");

        fake.Advance(TimeSpan.FromSeconds(0.4)); // 2.9 s: the cadence's next point is 3 s
        runtime.RunUntilIdle();
        Assert.False(seen.TryReceive(out extra), $"a tick came before the cadence's next point, at {extra}");

        fake.Advance(TimeSpan.FromSeconds(0.1));
        runtime.RunUntilIdle();
        Assert.True(seen.TryReceive(out TimeSpan second));
        Assert.Equal(TimeSpan.FromSeconds(3), second);
        ticker!.Stop();
    }

    [Fact]
    public void Ticker_PeriodBelowTheTimerResolution_NeverTicksTwiceAtOneInstant()
    {
        using var runtime = new DeterministicRuntime(seed: 11);
        TimeSpan[] ticks = runtime.Run(runtime, static async rt =>
        {
            DateTimeOffset start = rt.TimeProvider.GetUtcNow();
            var seen = new TimeSpan[6];
            using Ticker ticker = Chan.Ticker(TimeSpan.FromMilliseconds(0.5));
            for (int i = 0; i < seen.Length; i++)
            {
                seen[i] = await ticker.Channel.ReceiveAsync() - start;
            }

            return seen;
        });

        for (int i = 1; i < ticks.Length; i++)
        {
            Assert.True(ticks[i] > ticks[i - 1], $"ticks {i - 1} and {i} both came at {ticks[i]}: {string.Join(", ", ticks)}");
        }
    }

    [Fact]
    public void Ticker_OnAClockCoarserThanItsPeriod_KeepsThePeriod()
    {
        // A 150 ms period on a clock of 100 ms ticks was truncated to one clock tick: the ticker
        // ticked every 100 ms, 15 times in 1.5 s. Each tick must come no earlier than its point of
        // the cadence, read on the ticker's own clock.
        var clock = new CoarseFakeTimeProvider();
        using var runtime = new CurrentThreadRuntime(new RuntimeOptions { TimeProvider = clock });
        long start = clock.GetTimestamp();
        var seen = Chan.Unbounded<TimeSpan>();
        Ticker? ticker = null;
        runtime.SpawnDetached(async () =>
        {
            ticker = Chan.Ticker(TimeSpan.FromMilliseconds(150));
            while (true)
            {
                await ticker.Channel.ReceiveAsync();
                seen.TrySend(clock.GetElapsedTime(start));
            }
        });
        runtime.RunUntilIdle();
        for (int ms = 0; ms < 1500; ms += 10)
        {
            clock.Advance(TimeSpan.FromMilliseconds(10));
            runtime.RunUntilIdle();
        }

        ticker!.Stop();
        int count = 0;
        while (seen.TryReceive(out TimeSpan at))
        {
            count++;
            Assert.True(at >= TimeSpan.FromMilliseconds(150 * count), $"tick {count} came at {at.TotalMilliseconds} ms on the ticker's clock");
        }

        Assert.InRange(count, 9, 10);
    }

    /// <summary>A fake clock whose timestamps count tenths of a second (its timers fire on the fine fake time).</summary>
    private sealed class CoarseFakeTimeProvider : FakeTimeProvider
    {
        public override long TimestampFrequency => 10;

        public override long GetTimestamp() => base.GetTimestamp() * 10 / base.TimestampFrequency;
    }
}
