using System;
using Myriad.Channels;
using Myriad.Coordination;
using Myriad.Diagnostics;
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
            Assert.Equal(2, Sync.Result(receiving));
            Assert.Equal(0, Sync.Result(selecting));
            Sync.Result(locking);
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }
}
