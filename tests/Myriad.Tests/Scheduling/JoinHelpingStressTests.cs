using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// Spawn trees under join helping: parents run unstarted children inline while thieves run the
/// stale queue entries those children leave behind, and children that suspend hand their outcome on
/// through their inner job. Every sum must come out right, and no job may complete twice.
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public class JoinHelpingStressTests
{
    /// <summary>A node of a 10-ary tree over [lo, lo + count); some leaves suspend when <paramref name="yieldingLeaves"/>.</summary>
    private static async Job<long> Node(JobRuntime runtime, long lo, long count, bool yieldingLeaves)
    {
        if (count == 1)
        {
            if (yieldingLeaves && (lo & 7) == 0)
            {
                await Task.Yield(); // some leaves suspend, so their spawns wait on an inner job
            }

            return lo;
        }

        int parts = (int)Math.Min(10, count);
        var children = new Job<long>[parts];
        long start = lo;
        for (int i = 0; i < parts; i++)
        {
            long size = (count / parts) + (i < count % parts ? 1 : 0);
            children[i] = runtime.Spawn((runtime, start, size, yieldingLeaves), static s => Node(s.runtime, s.start, s.size, s.yieldingLeaves));
            start += size;
        }

        long sum = 0;
        foreach (Job<long> child in children)
        {
            sum += await child;
        }

        return sum;
    }

    [Theory]
    [InlineData(1, false)]
    [InlineData(2, false)]
    [InlineData(4, false)]
    [InlineData(2, true)]
    [InlineData(8, true)]
    [InlineData(16, false)]
    public void SpawnTree_WithHelpingAndThieves_SumsEveryLeafOnce(int workers, bool syncLeaves)
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = workers });
        long leaves = syncLeaves ? 200_000 : 20_000;
        for (int round = 0; round < 10; round++)
        {
            long sum = TestHelpers.OnThread(() => runtime.Run((runtime, leaves, syncLeaves), static s => Node(s.runtime, 0, s.leaves, yieldingLeaves: !s.syncLeaves)));
            Assert.Equal(leaves * (leaves - 1) / 2, sum);
        }
    }

    [Fact]
    public void SpawnTree_EveryWorkerBusyHelping_StartsNoSpareThreads()
    {
        // Both workers run subtrees inline for tens of milliseconds while siblings wait in their
        // queues: busy, not blocked. The wake watchdog used to take that for a stall and start a
        // spare thread per SpareThreadDelay (16-25 for these 4 trees), which competed with the
        // workers for the 2 cores. Now a spare may only start once such a busy stall lasted
        // BusyStallFactor delays (a tree slowed down that much by a loaded machine), plus one for a
        // worker the OS descheduled for a whole delay.
        const int trees = 4;
        const long leaves = 1_000_000;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var clock = System.Diagnostics.Stopwatch.StartNew();
        for (int round = 0; round < trees; round++)
        {
            long sum = TestHelpers.OnThread(() => runtime.Run((runtime, leaves), static s => Node(s.runtime, 0, s.leaves, yieldingLeaves: false)));
            Assert.Equal(leaves * (leaves - 1) / 2, sum);
        }

        long busyBoundMs = (long)runtime.Options.SpareThreadDelay.TotalMilliseconds * Myriad.Internal.MyriadDefaults.BusyStallFactor;
        long allowed = (clock.ElapsedMilliseconds / busyBoundMs) + 1;
        Assert.True(runtime.SparesStarted <= allowed, $"{runtime.SparesStarted} spare threads started for {trees} trees in {clock.ElapsedMilliseconds} ms (at most {allowed} expected)");
    }

    [Fact]
    public void QueuedWork_BehindAWorkerThatKeepsHelping_RunsWhileTheOtherWorkerIsBlocked()
    {
        // A job spawns X (queued on its worker), then keeps spawning and awaiting children that
        // complete at once, until X has run. The other worker is blocked waiting for X too. Helped
        // jobs must not make X look as if it moved: a spare thread has to run it.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var xRan = new ManualResetEventSlim();
        bool done = TestHelpers.OnThread(() => runtime.Run((runtime, xRan), static async s =>
        {
            Job blocker = s.runtime.Spawn(s.xRan, static ran =>
            {
                ran.Wait(TestHelpers.DefaultTimeout); // blocks its worker until X ran
            });
            await Task.Yield(); // off the lent thread, onto a worker; the blocker takes the other one
            s.runtime.SpawnDetached(s.xRan, static ran => ran.Set());
            var clock = System.Diagnostics.Stopwatch.StartNew();
            while (!s.xRan.IsSet && clock.Elapsed < TestHelpers.DefaultTimeout)
            {
                await s.runtime.Spawn(0, static _ => Job.CompletedJob);
            }

            await blocker;
            return s.xRan.IsSet;
        }));
        Assert.True(done);
    }
}
