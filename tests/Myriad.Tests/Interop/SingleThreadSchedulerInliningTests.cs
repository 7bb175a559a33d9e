using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Interop;

/// <summary>
/// What a single-threaded runtime's <see cref="JobRuntime.TaskScheduler"/> runs inline on its driving
/// thread. It declines an await's continuation that the TPL offers only because the driver is a
/// thread-pool thread (a seed's schedule must not depend on the driving thread), and nothing else:
/// RunSynchronously and ExecuteSynchronously continuations run inline as on any scheduler, and a
/// job's resume from a plain TaskCompletionSource still runs inside its SetResult.
/// </summary>
public sealed class SingleThreadSchedulerInliningTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    private static SingleThreadRuntime Create(string kind) => kind == "deterministic" ? new DeterministicRuntime(3) : new CurrentThreadRuntime();

    [Theory]
    [InlineData("current-thread")]
    [InlineData("deterministic")]
    public void RunSynchronously_OnTheRuntimesSchedulerInsideAJobDrivenFromThePool_RunsTheTask(string kind)
    {
        // Declined, the TPL would queue the task behind the driving thread and block that thread.
        using SingleThreadRuntime runtime = Create(kind);
        int ran = Task.Run(() => runtime.Run((JobRuntime)runtime, static async rt =>
        {
            await Job.Yield();
            int value = 0;
            var task = new Task(() => value = 1);
            task.RunSynchronously(rt.TaskScheduler);
            return value;
        })).WaitAsync(Bound).GetAwaiter().GetResult();
        Assert.Equal(1, ran);
    }

    [Theory]
    [InlineData("current-thread")]
    [InlineData("deterministic")]
    public void ContinueWith_ExecuteSynchronouslyOnTheRuntimesScheduler_RunsInsideSetResult(string kind)
    {
        using SingleThreadRuntime runtime = Create(kind);
        bool ranInside = runtime.Run((JobRuntime)runtime, static async rt =>
        {
            await Job.Yield();
            var source = new TaskCompletionSource();
            bool inSetResult = false, inside = false;
            _ = source.Task.ContinueWith(_ => inside = inSetResult, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, rt.TaskScheduler);
            inSetResult = true;
            source.SetResult();
            inSetResult = false;
            await Job.Yield();
            return inside;
        });
        Assert.True(ranInside);
    }

    [Fact]
    public void PlainSourceSetByAJob_TheJobThenBlocksOnWhatTheWaiterDoesNext_NoDeadlock()
    {
        // The waiting job resumes inside SetResult, as after any plain TaskCompletionSource; queued
        // instead, it would wait behind the blocked driving thread forever.
        using var runtime = new CurrentThreadRuntime();
        bool finished = Task.Run(() => runtime.Run(runtime, static async rt =>
        {
            var source = new TaskCompletionSource();
            var done = new TaskCompletionSource();
            Job waiter = rt.Spawn((source, done), static async s =>
            {
                await s.source.Task;
                s.done.SetResult();
            });
            await Job.Yield();
            await Job.Yield();
            source.SetResult();
            Block(done.Task);
            await waiter;
        })).Wait(Bound);
        Assert.True(finished);

        static void Block(Task task) => task.Wait();
    }
}
