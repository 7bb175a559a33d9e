using System;
using System.Runtime.CompilerServices;
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
    [InlineData("current-thread", false)]
    [InlineData("deterministic", false)]
    [InlineData("current-thread", true)]
    [InlineData("deterministic", true)]
    public void RunSynchronously_OnTheRuntimesSchedulerInsideAJobDrivenFromThePool_RunsTheTask(string kind, bool actionState)
    {
        // Declined, the TPL would queue the task behind the driving thread and block that thread.
        // A task whose state is an Action (a callback passed as state, no closure) is no await's
        // continuation either.
        using SingleThreadRuntime runtime = Create(kind);
        int ran = Task.Run(() => runtime.Run((runtime: (JobRuntime)runtime, actionState), static async s =>
        {
            await Job.Yield();
            var value = new StrongBox<int>();
            Action set = () => value.Value = 1;
            Task task = s.actionState ? new Task(static state => ((Action)state!)(), set) : new Task(set);
            task.RunSynchronously(s.runtime.TaskScheduler);
            return value.Value;
        })).WaitAsync(Bound).GetAwaiter().GetResult();
        Assert.Equal(1, ran);
    }

    [Theory]
    [InlineData("current-thread", false)]
    [InlineData("deterministic", false)]
    [InlineData("current-thread", true)]
    [InlineData("deterministic", true)]
    public void ContinueWith_ExecuteSynchronouslyOnTheRuntimesScheduler_RunsInsideSetResult(string kind, bool actionState)
    {
        using SingleThreadRuntime runtime = Create(kind);
        bool ranInside = runtime.Run((runtime: (JobRuntime)runtime, actionState), static async s =>
        {
            await Job.Yield();
            var source = new TaskCompletionSource();
            var inSetResult = new StrongBox<bool>();
            var inside = new StrongBox<bool>();
            Action record = () => inside.Value = inSetResult.Value;
            _ = s.actionState
                ? source.Task.ContinueWith(static (_, state) => ((Action)state!)(), record, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, s.runtime.TaskScheduler)
                : source.Task.ContinueWith(_ => record(), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, s.runtime.TaskScheduler);
            inSetResult.Value = true;
            source.SetResult();
            inSetResult.Value = false;
            await Job.Yield();
            return inside.Value;
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
