using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Interop;

/// <summary>
/// <c>AsTask()</c> of a pending job of a single-threaded runtime (a task whose blocking wait drives
/// the runtime) reports the job's outcome as a <see cref="Task"/> over any job does: a canceled job
/// gives a canceled task, a failed job a faulted one.
/// </summary>
public sealed class DrivenTaskTests
{
    public static TheoryData<string> SingleThreadKinds => Runtimes.SingleThreadKinds;

    private static SingleThreadRuntime Create(string kind) => Runtimes.CreateSingleThread(kind);

    [Theory]
    [MemberData(nameof(SingleThreadKinds))]
    public void AsTask_JobEndsWithOperationCanceledException_TaskIsCanceled(string kind)
    {
        using SingleThreadRuntime runtime = Create(kind);
        var gate = new Promise<int>();
        Task<int> task = TestHelpers.OnThread(() =>
        {
            Task<int> pending = runtime.Spawn(gate, static async g => await g.Job + 1).AsTask();
            Assert.False(pending.IsCompleted);
            gate.TrySetCanceled();
            Assert.ThrowsAny<Exception>(() => pending.Wait()); // drives the runtime until the job ended
            return pending;
        });

        Assert.Equal(TaskStatus.Canceled, task.Status);
        Assert.ThrowsAny<OperationCanceledException>(() => task.GetAwaiter().GetResult());
    }

    [Theory]
    [MemberData(nameof(SingleThreadKinds))]
    public void AsTask_JobOfADisposedRuntime_TaskIsCanceled(string kind)
    {
        SingleThreadRuntime runtime = Create(kind);
        var gate = new Promise<int>();
        Task<int> task = runtime.Spawn(gate, static async g => await g.Job + 1).AsTask();
        runtime.Dispose(); // the job, queued and never started, ends canceled

        Assert.True(SpinWait.SpinUntil(() => task.IsCompleted, TimeSpan.FromSeconds(10)), "the task never completed");
        Assert.Equal(TaskStatus.Canceled, task.Status);
    }

    [Theory]
    [MemberData(nameof(SingleThreadKinds))]
    public void AsTask_JobFails_TaskIsFaultedWithTheJobsException(string kind)
    {
        using SingleThreadRuntime runtime = Create(kind);
        var gate = new Promise<int>();
        Task<int> task = TestHelpers.OnThread(() =>
        {
            Task<int> pending = runtime.Spawn(gate, static async g => await g.Job + 1).AsTask();
            gate.TrySetException(new InvalidOperationException("boom"));
            Assert.ThrowsAny<Exception>(() => pending.Wait());
            return pending;
        });

        Assert.Equal(TaskStatus.Faulted, task.Status);
        Assert.Equal("boom", Assert.IsType<InvalidOperationException>(task.Exception!.InnerException).Message);
    }

    [Theory]
    [MemberData(nameof(SingleThreadKinds))]
    public void AsTask_CalledTwiceOnAPendingJob_ThrowsInvalidOperationExceptionUnwrapped(string kind)
    {
        using SingleThreadRuntime runtime = Create(kind);
        var gate = new Promise<int>();
        Job<int> job = runtime.Spawn(gate, static async g => await g.Job + 1);
        Task<int> first = job.AsTask();

        // As on a MultiThreadRuntime, and as a ValueTask awaited twice: the misuse itself, not a
        // TaskSchedulerException around it.
        Assert.Throws<InvalidOperationException>(() => { _ = job.AsTask(); });

        gate.SetResult(1);
        runtime.RunUntilIdle();
        Assert.Equal(2, first.Result);
    }

    [Fact]
    public void AsTask_DeterministicRuntimeDeadlocked_BlockingWaitThrowsDeadlockException()
    {
        using var runtime = new DeterministicRuntime(3) { DeadlockGracePeriod = TimeSpan.FromMilliseconds(10) };
        var never = new Promise<int>();
        Task<int> task = runtime.Spawn(never, static async p => await p.Job + 1).AsTask();

        // As job.Wait() does: the wait drives the runtime, finds every job asleep, and reports it.
        Task<Exception?> waiting = Task.Run<Exception?>(() => Record.Exception(() => task.Wait()));
        Assert.True(waiting.Wait(TimeSpan.FromSeconds(30)), "the blocking wait on the task never returned");
        Assert.IsType<DeadlockException>(Assert.IsType<TaskSchedulerException>(waiting.Result).InnerException);
    }
}
