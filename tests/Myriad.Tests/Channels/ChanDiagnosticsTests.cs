using System;
using Myriad.Channels;
using Myriad.Coordination;
using Myriad.Diagnostics;
using Myriad.Scheduling;
using Myriad.Testing;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

[Collection(HeavyCollection.Name)]
public sealed class ChanDiagnosticsTests
{
    private static async Job<int> ReceiveOne(Chan<int> ch) => await ch.ReceiveAsync() + 1;

    private static async Job<int> SelectOne(Chan<int> ch) => await Select.Receive(ch).Timeout(TimeSpan.FromMinutes(1));

    private static async Job LockOnce(JobMutex mutex)
    {
        using (await mutex.LockAsync())
        {
        }
    }

    [Fact]
    public void Snapshot_JobBlockedOnChannelOrPrimitive_NamesWhatItAwaits()
    {
        JobDiagnostics.TrackLiveJobs = true;
        try
        {
            Chan<int> ch = Chan.Unbuffered<int>();
            var mutex = new JobMutex();
            JobMutex.Releaser held = Sync.Result(mutex.LockAsync());
            Job<int> receiving = ReceiveOne(ch);
            Job<int> selecting = SelectOne(ch);
            Job locking = LockOnce(mutex);

            string dump = JobDiagnostics.Dump();
            Assert.Contains("Chan<Int32>.ReceiveAsync", dump);
            Assert.Contains("Select (1 channel case(s), timeout)", dump);
            Assert.Contains("JobMutex.LockAsync", dump);

            Assert.True(ch.TrySend(1));
            Assert.True(ch.TrySend(2));
            held.Dispose();

            // Jobs of no runtime, woken by this plain thread's sends and release: they resume on the
            // thread pool, not inside the calls (see ForeignWaiterResumeTests).
            Assert.Equal(2, receiving.Wait());
            Assert.Equal(0, selecting.Wait());
            locking.Wait();
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }
    [Fact]
    public void DeadlockReport_JobInAwaitForeach_IsTheSameTextOnReplay()
    {
        // The description named the channel by its identity hash code, which a new channel object
        // gets afresh: the replay of a deadlock in ReadAllAsync read differently from the report.
        Func<DeterministicRuntime, Job> body = static async runtime =>
        {
            Chan<int> never = Chan.Unbounded<int>();
            await runtime.Spawn(never, static async ch =>
            {
                await foreach (int item in ch.ReadAllAsync())
                {
                    _ = item;
                }
            });
        };

        var found = Assert.Throws<ScheduleExplorationException>(() => ScheduleExplorer.Explore(body, new ExplorationOptions { Seeds = 1 }));
        var first = Assert.IsType<DeadlockException>(found.InnerException);
        Assert.Contains("Chan<Int32>.ReadAllAsync", first.Message);
        for (int i = 0; i < 2; i++)
        {
            var again = Assert.Throws<DeadlockException>(() => ScheduleExplorer.Replay(body, found.Seed));
            Assert.Equal(first.Message, again.Message);
        }
    }
}
