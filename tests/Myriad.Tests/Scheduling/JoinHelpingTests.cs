using System.Diagnostics;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// A job that awaits a spawned job of its own runtime before any worker started it runs it inline
/// (join helping), and never a job of another runtime.
/// </summary>
public class JoinHelpingTests
{
    /// <summary>The parent's state machine (not merely a lambda declared in it) is on the stack.</summary>
    private static bool InsideTheParentsFrame() =>
        System.Array.Exists(new StackTrace().GetFrames(), f => f.GetMethod()?.DeclaringType?.Name.StartsWith($"<{nameof(ParentAwaitingItsChild)}>d__", System.StringComparison.Ordinal) == true);

    private static async Job<int> ParentAwaitingItsChild(JobRuntime runtime)
    {
        int inline = 0;
        for (int i = 0; i < 100; i++)
        {
            inline += await runtime.Spawn(0, static _ => Job.FromResult(InsideTheParentsFrame() ? 1 : 0));
        }

        return inline;
    }

    [Fact]
    public void Await_UnstartedSpawnOfTheOwnRuntime_RunsItInsideTheAwaitingJob()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var outcome = new System.Threading.Tasks.TaskCompletionSource<int>();
        runtime.SpawnDetached((runtime, outcome), static async s => s.outcome.SetResult(await ParentAwaitingItsChild(s.runtime)));
        Assert.True(outcome.Task.Wait(TestHelpers.DefaultTimeout));

        // A thief may start a child first now and then; the rest ran inline, inside the parent's frame.
        Assert.True(outcome.Task.Result >= 50, $"only {outcome.Task.Result} of 100 children ran inline");
    }

    [Fact]
    public void Await_UnstartedSpawnOfAnotherRuntime_RunsItOnItsOwnRuntime()
    {
        using var parentRuntime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        using var childRuntime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var outcome = new System.Threading.Tasks.TaskCompletionSource<int>();
        parentRuntime.SpawnDetached((childRuntime, outcome), static async s =>
        {
            int onOwn = 0;
            for (int i = 0; i < 50; i++)
            {
                onOwn += await s.childRuntime.Spawn(s.childRuntime, static rt => Job.FromResult(rt.IsRuntimeThread ? 1 : 0));
            }

            s.outcome.SetResult(onOwn);
        });
        Assert.True(outcome.Task.Wait(TestHelpers.DefaultTimeout));
        Assert.Equal(50, outcome.Task.Result);
    }

    [Fact]
    public void Await_SpawnAtOnceInALoopOnCurrentThreadRuntime_LeavesNoQueueEntryBehind()
    {
        // Each child is helped (run inside the parent) and its entry taken back: the queue does not
        // grow by one finished entry per child while the parent runs.
        using var runtime = new CurrentThreadRuntime();
        long queued = runtime.Run(runtime, static async rt =>
        {
            for (int i = 0; i < 1000; i++)
            {
                await rt.Spawn((long)i, static x => Job.FromResult(x * x));
            }

            return rt.Stats().QueuedItems;
        });
        Assert.Equal(0, queued);
    }
}
