using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Interop;

/// <summary>
/// A job sees the default <see cref="TaskScheduler.Current"/>, also when it runs inline on a thread
/// that runs a task of the runtime's <see cref="JobRuntime.TaskScheduler"/>: spawned and awaited at
/// once there (join helping), or run by a worker or driver that waits in <c>Wait()</c> inside such a
/// task. Before, the job saw the runtime's scheduler, and a <c>Task.Factory.StartNew</c> in it sent a
/// plain delegate to the runtime's workers.
/// </summary>
public sealed class TaskSchedulerIsolationTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    private static async Job<bool> SeesDefaultScheduler()
    {
        bool before = TaskScheduler.Current == TaskScheduler.Default;
        await Task.Delay(1);
        return before && TaskScheduler.Current == TaskScheduler.Default;
    }

    [Fact]
    public void Spawn_AwaitedAtOnceFromATaskOnTheRuntimesScheduler_RunsWithTheDefaultScheduler()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task<bool> outer = Task.Factory.StartNew(
            async () => await runtime.Spawn(static () => SeesDefaultScheduler()),
            CancellationToken.None,
            TaskCreationOptions.None,
            runtime.TaskScheduler).Unwrap();

        Assert.True(outer.Wait(Patience));
        Assert.True(outer.Result);
    }

    [Fact]
    public void Wait_InsideATaskOnTheRuntimesScheduler_RunsOtherJobsWithTheDefaultScheduler()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, SpareThreadDelay = TimeSpan.FromSeconds(30) });
        var seen = new Promise<bool>();
        Task<bool> seenTask = seen.Job.AsTask();
        Task outer = Task.Factory.StartNew(
            () =>
            {
                // Queued behind this task on the one worker, which runs it while it waits below.
                runtime.SpawnDetached(seen, static async p => p.SetResult(await SeesDefaultScheduler()));
                runtime.Spawn(static async () => await Task.Delay(50)).Wait();
            },
            CancellationToken.None,
            TaskCreationOptions.None,
            runtime.TaskScheduler);

        Assert.True(outer.Wait(Patience));
        Assert.True(seenTask.Wait(Patience));
        Assert.True(seenTask.Result);
    }

    [Theory]
    [InlineData("current")]
    [InlineData("deterministic")]
    public void Wait_InsideATaskOnASingleThreadRuntimesScheduler_RunsTheJobWithTheDefaultScheduler(string kind)
    {
        using SingleThreadRuntime runtime = Runtimes.CreateSingleThread(kind);
        bool seen = runtime.Run(runtime, static async rt =>
        {
            Task<bool> inner = Task.Factory.StartNew(
                static r => ((JobRuntime)r!).Spawn(static () => SeesDefaultScheduler()).Wait(),
                rt,
                CancellationToken.None,
                TaskCreationOptions.None,
                rt.TaskScheduler);
            return await inner;
        });

        Assert.True(seen);
    }

    [Fact]
    public void Run_InsideATaskOfAnotherScheduler_JobStartingAnAttachedChild_DoesNotDeadlock()
    {
        // The items of a drive inside such a task run inside a task of the default scheduler; a
        // child started AttachedToParent once attached to that task, which then waited for it
        // while the child waited for the job.
        using var runtime = new CurrentThreadRuntime();
        TaskScheduler exclusive = new ConcurrentExclusiveSchedulerPair().ExclusiveScheduler;
        Task outer = Task.Factory.StartNew(
            () => runtime.Run(static async () =>
            {
                using var signal = new ManualResetEventSlim();
                Task child = Task.Factory.StartNew(static s => ((ManualResetEventSlim)s!).Wait(), signal, CancellationToken.None, TaskCreationOptions.AttachedToParent, TaskScheduler.Default);
                await Task.Yield();
                signal.Set();
                await child.ConfigureAwait(false);
            }),
            CancellationToken.None,
            TaskCreationOptions.None,
            exclusive);

        Assert.True(outer.Wait(Patience), "the drive deadlocked on the attached child");
    }
}
