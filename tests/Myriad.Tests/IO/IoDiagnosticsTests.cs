using System;
using System.Threading;
using Myriad.Diagnostics;
using Myriad.IO;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.IO;

/// <summary>The live-job dump names a socket wait by its public operation, as it names a channel's.</summary>
[Collection(HeavyCollection.Name)] // TrackLiveJobs is process-wide
public sealed class IoDiagnosticsTests
{
    [Fact]
    public void Dump_JobsWaitingOnASocket_NameTheReadAndTheAccept()
    {
        JobDiagnostics.TrackLiveJobs = true;
        try
        {
            using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
            using var listener = JobTcpListener.Bind(IoTestSupport.Loopback, runtime);
            var connected = new ManualResetEventSlim();
            runtime.SpawnDetached((listener, connected), static async s =>
            {
                using JobTcpConnection client = await JobTcpConnection.ConnectAsync(s.listener.LocalEndPoint);
                s.connected.Set();
                try
                {
                    await client.ReadAsync(new byte[1]);
                }
                catch (Exception)
                {
                    // the listener's disposal at the end of the test resets the connection
                }
            });
            Job<JobTcpConnection> first = runtime.Spawn(listener, static l => l.AcceptAsync());
            using JobTcpConnection peer = first.Wait();
            Assert.True(connected.Wait(Bounded.Limit));
            Job<JobTcpConnection> second = runtime.Spawn(listener, static async l => await l.AcceptAsync());

            string dump = "";
            Assert.True(SpinWait.SpinUntil(
                () =>
                {
                    dump = JobDiagnostics.Dump();
                    return dump.Contains("JobTcpConnection.ReadAsync", StringComparison.Ordinal)
                        && dump.Contains("JobTcpListener.AcceptAsync", StringComparison.Ordinal);
                },
                Bounded.Limit),
                dump);
            Assert.DoesNotContain("ReadOperation", dump, StringComparison.Ordinal);
            Assert.DoesNotContain("AcceptOperation", dump, StringComparison.Ordinal);
            runtime.Detach(second);
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }
}
