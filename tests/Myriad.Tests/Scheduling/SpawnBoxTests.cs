using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// A spawned job's body run inline, on a thread that waits for it (a blocking wait, a drive of a
/// single-threaded runtime) or inside a job that awaits it (join helping), leaves that thread's
/// ExecutionContext and SynchronizationContext as it found them, as <c>Task.RunSynchronously</c>
/// does. A worker's loop resets both after every item anyway; these paths are not a worker's loop.
/// </summary>
public class SpawnBoxTests
{
    private static readonly AsyncLocal<string?> s_local = new();

    private static void InstallContexts()
    {
        SynchronizationContext.SetSynchronizationContext(new SynchronizationContext());
        s_local.Value = "body";
    }

    // On a thread of its own: the test runner's thread may have a SynchronizationContext, and a
    // waiting thread that has one never runs the job inline (the job's Task awaits would capture it).
    [Theory]
    [MemberData(nameof(Runtimes.All), MemberType = typeof(Runtimes))]
    public void Wait_SyncBodyInstallsContexts_WaitingThreadKeepsItsOwn(string name)
    {
        TestHelpers.OnThread(() =>
        {
            using JobRuntime runtime = Runtimes.Create(name);
            for (int i = 0; i < 50; i++)
            {
                runtime.Spawn(0, static (int _) => InstallContexts()).Wait();
                Assert.Null(SynchronizationContext.Current);
                Assert.Null(s_local.Value);
            }
        });
    }

    [Theory]
    [MemberData(nameof(Runtimes.All), MemberType = typeof(Runtimes))]
    public void Run_NonAsyncBodyInstallsContexts_CallingThreadKeepsItsOwn(string name)
    {
        TestHelpers.OnThread(() =>
        {
            using JobRuntime runtime = Runtimes.Create(name);
            for (int i = 0; i < 50; i++)
            {
                runtime.Run(static () =>
                {
                    InstallContexts();
                    return Job.CompletedJob;
                });
                Assert.Null(SynchronizationContext.Current);
                Assert.Null(s_local.Value);

                Assert.Equal(1, runtime.Run(static () =>
                {
                    InstallContexts();
                    return Job.FromResult(1);
                }));
                Assert.Null(SynchronizationContext.Current);
                Assert.Null(s_local.Value);
            }
        });
    }

    [Theory]
    [MemberData(nameof(Runtimes.SingleThreadKinds), MemberType = typeof(Runtimes))]
    public void Run_BodyInstallsASynchronizationContextAndReturnsAPendingJob_LaterJobsOfTheDriveDoNotSeeIt(string kind)
    {
        // The drive runs the body inline, then the spawn it returned from its queue: that spawn
        // must start with the thread's SynchronizationContext as the drive had it (none), not the
        // body's. (An AsyncLocal the body set does flow to it, captured by the spawn.)
        TestHelpers.OnThread(() =>
        {
            using SingleThreadRuntime runtime = Runtimes.CreateSingleThread(kind);
            (bool NoSyncContext, string? Local) seen = runtime.Run(runtime, static r =>
            {
                InstallContexts();
                return r.Spawn(0, static _ => Job.FromResult((SynchronizationContext.Current is null, s_local.Value)));
            });
            Assert.True(seen.NoSyncContext, "a job run later in the drive saw the SynchronizationContext the inline body installed");
            Assert.Equal("body", seen.Local);
            Assert.Null(SynchronizationContext.Current);
            Assert.Null(s_local.Value);
        });
    }

    private sealed class Children
    {
        internal int Inline;
    }

    private static async Job<int> AwaitChildrenThatInstallContexts(JobRuntime runtime, Children children)
    {
        int leaks = 0;
        for (int i = 0; i < 100; i++)
        {
            int parentThread = System.Environment.CurrentManagedThreadId;
            await runtime.Spawn((children, parentThread), static s =>
            {
                if (System.Environment.CurrentManagedThreadId == s.parentThread)
                {
                    s.children.Inline++;
                }

                InstallContexts();
            });

            if (SynchronizationContext.Current is not null || s_local.Value is not null)
            {
                leaks++;
                SynchronizationContext.SetSynchronizationContext(null);
                s_local.Value = null;
            }
        }

        return leaks;
    }

    [Fact]
    public void Await_SyncSpawnHelpedInline_AwaitingJobKeepsItsContexts()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var children = new Children();
        var outcome = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        runtime.SpawnDetached((runtime, children, outcome), static async s => s.outcome.SetResult(await AwaitChildrenThatInstallContexts(s.runtime, s.children)));
        Assert.True(outcome.Task.Wait(TestHelpers.DefaultTimeout));

        Assert.True(Volatile.Read(ref children.Inline) > 0, "no child ran inside the parent: nothing was tested");
        Assert.Equal(0, outcome.Task.Result);
    }
}
