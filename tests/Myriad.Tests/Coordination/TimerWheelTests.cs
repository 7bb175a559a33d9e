using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using Myriad.Coordination;
using Myriad.Internal;
using Xunit;

namespace Myriad.Tests.Coordination;

public sealed class TimerWheelTests
{
    [Fact]
    public void Advance_RandomDeadlinesOnEveryLevel_FireExactlyAtTheirMillisecond()
    {
        var random = new Random(7);
        var wheel = new TimerWheel();
        var entries = new List<TimerEntry>();
        for (int i = 0; i < 5_000; i++)
        {
            int level = random.Next(TimerWheel.Levels);
            long range = 1L << (TimerWheel.LevelBits * (level + 1));
            var entry = NewEntry(random.NextInt64(0, range));
            wheel.Insert(entry);
            entries.Add(entry);
        }

        long previous = -1;
        var batch = new TimerBatch();
        int fired = 0;
        while (wheel.Count > 0)
        {
            long next = wheel.NextExpiration();
            Assert.True(next >= wheel.Elapsed, $"next expiration {next} is behind the wheel's now {wheel.Elapsed}");
            wheel.Advance(next, batch);
            for (int i = 0; i < batch.Count; i++)
            {
                var work = (Work)batch.ItemAt(i);
                Assert.Equal(work.Deadline, wheel.Elapsed); // not early, not late: at its exact millisecond
                Assert.True(work.Deadline >= previous, "deadline order");
                previous = work.Deadline;
                fired++;
            }

            batch.Clear();
        }

        Assert.Equal(entries.Count, fired);
        Assert.All(entries, e => Assert.Null(e.Shard));
        Assert.Equal(long.MaxValue, wheel.NextExpiration());
    }

    [Theory]
    [InlineData(1L)]
    [InlineData(63L)]
    [InlineData(64L)]
    [InlineData(4_095L)]
    [InlineData(4_096L)]
    [InlineData(262_144L + 17)]
    [InlineData((1L << 30) + 12_345)]
    [InlineData(TimerWheel.Span - 1)]
    public void Advance_DeadlineOnAHigherLevel_CascadesAndFiresNoEarlier(long deadline)
    {
        var wheel = new TimerWheel();
        var entry = NewEntry(deadline);
        wheel.Insert(entry);
        int startLevel = TimerWheel.LevelFor(0, deadline);
        Assert.Equal(startLevel, entry.Slot / TimerWheel.SlotsPerLevel);

        var batch = new TimerBatch();
        wheel.Advance(deadline - 1, batch);
        Assert.Equal(0, batch.Count);
        Assert.Equal(1, wheel.Count);
        if (deadline % TimerWheel.SlotsPerLevel != 0)
        {
            // One millisecond before, the entry has cascaded down to level 0 (a deadline on a slot
            // boundary cascades and fires in the same advance).
            Assert.Equal(0, entry.Slot / TimerWheel.SlotsPerLevel);
        }

        wheel.Advance(deadline, batch);
        Assert.Equal(1, batch.Count);
        Assert.Equal(0, wheel.Count);
    }

    [Fact]
    public void Advance_DeadlineBeyondTheWheelsSpan_WrapsOnTheTopLevelAndFiresOnTime()
    {
        long start = 5_000;
        long deadline = start + (2 * TimerWheel.Span) + 777;
        var wheel = new TimerWheel(start);
        wheel.Insert(NewEntry(deadline));
        var batch = new TimerBatch();
        int turns = 0;
        while (batch.Count == 0)
        {
            long next = wheel.NextExpiration();
            Assert.True(next <= deadline, "never scheduled past its deadline");
            wheel.Advance(next, batch);
            turns++;
            Assert.True(turns < 100, "the wheel keeps turning without firing");
        }

        Assert.Equal(deadline, wheel.Elapsed);
        Assert.Equal(deadline, ((Work)batch.ItemAt(0)).Deadline);
    }

    [Fact]
    public void Insert_DeadlineAlreadyPassed_FiresAtTheNextAdvanceWithoutMovingTime()
    {
        var wheel = new TimerWheel(1_000);
        var entry = NewEntry(10);
        wheel.Insert(entry);
        Assert.Equal(1_000, entry.Deadline);
        Assert.Equal(1_000, wheel.NextExpiration());
        var batch = new TimerBatch();
        wheel.Advance(1_000, batch);
        Assert.Equal(1, batch.Count);
    }

    [Fact]
    public void Remove_ScheduledEntries_UnlinkAtOnceAndNeverFire()
    {
        var random = new Random(9);
        var wheel = new TimerWheel();
        var kept = new List<TimerEntry>();
        var removed = new List<TimerEntry>();
        for (int i = 0; i < 10_000; i++)
        {
            var entry = NewEntry(random.NextInt64(1, 1L << 24));
            wheel.Insert(entry);
            (random.Next(2) == 0 ? kept : removed).Add(entry);
        }

        foreach (TimerEntry entry in removed)
        {
            Assert.True(wheel.Remove(entry));
            Assert.False(wheel.Remove(entry)); // a second remove finds it gone
            Assert.Null(entry.Links.Next);
            Assert.Null(entry.Links.Previous);
        }

        Assert.Equal(kept.Count, wheel.Count);
        var batch = new TimerBatch();
        var fired = new HashSet<WorkItem>();
        while (wheel.Count > 0)
        {
            wheel.Advance(wheel.NextExpiration(), batch);
            for (int i = 0; i < batch.Count; i++)
            {
                fired.Add(batch.ItemAt(i));
            }

            batch.Clear();
        }

        Assert.Equal(kept.Count, fired.Count);
        Assert.All(removed, e => Assert.DoesNotContain(e.Target, fired));
    }

    [Fact]
    public void Remove_CanceledEntry_IsCollectableBeforeItsDueTime()
    {
        var wheel = new TimerWheel();
        WeakReference weak = InsertAndRemove(wheel);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        Assert.False(weak.IsAlive, "a canceled timer is still reachable from the wheel");
        GC.KeepAlive(wheel);

        [MethodImpl(MethodImplOptions.NoInlining)]
        static WeakReference InsertAndRemove(TimerWheel wheel)
        {
            var neighbour = NewEntry(TimeSpan.FromHours(1).Ticks / TimeSpan.TicksPerMillisecond);
            var entry = NewEntry(TimeSpan.FromHours(1).Ticks / TimeSpan.TicksPerMillisecond);
            wheel.Insert(neighbour);
            wheel.Insert(entry);
            wheel.Remove(entry);
            return new WeakReference(entry);
        }
    }

    [Fact]
    public void Operations_RandomMixAgainstAModel_FireExactlyTheDueEntries()
    {
        var random = new Random(21);
        var wheel = new TimerWheel();
        var live = new List<TimerEntry>();
        var batch = new TimerBatch();
        for (int step = 0; step < 30_000; step++)
        {
            int action = random.Next(10);
            if (action < 5 || live.Count == 0)
            {
                long span = 1L << random.Next(1, 30);
                var entry = NewEntry(wheel.Elapsed + random.NextInt64(0, span));
                wheel.Insert(entry);
                live.Add(entry);
            }
            else if (action < 7)
            {
                int pick = random.Next(live.Count);
                Assert.True(wheel.Remove(live[pick]));
                live.RemoveAt(pick);
            }
            else
            {
                long now = wheel.Elapsed + random.Next(0, 1 << random.Next(1, 16));
                wheel.Advance(now, batch);
                var fired = new HashSet<WorkItem>();
                for (int i = 0; i < batch.Count; i++)
                {
                    fired.Add(batch.ItemAt(i));
                }

                batch.Clear();
                int due = live.RemoveAll(e => e.Deadline <= now);
                Assert.Equal(due, fired.Count);
                Assert.All(live, e => Assert.DoesNotContain(e.Target, fired));
            }

            Assert.Equal(live.Count, wheel.Count);
        }
    }

    private static TimerEntry NewEntry(long deadline) => new(new Work(deadline)) { Deadline = deadline };

    private sealed class Work(long deadline) : WorkItem
    {
        internal long Deadline { get; } = deadline;

        internal override void Execute(PerThread state)
        {
        }
    }
}
