using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// No silent hangs: a synchronous wait that nothing else would ever satisfy either makes progress
/// itself (drives or helps) or throws <see cref="InvalidOperationException"/> naming the problem.
/// </summary>
public class SynchronousWaitTests
{
    public static TheoryData<string> SingleThreadKinds => Runtimes.SingleThreadKinds;

    private static SingleThreadRuntime Create(string kind) => Runtimes.CreateSingleThread(kind);

    [Theory]
    [MemberData(nameof(SingleThreadKinds))]
    public void AsTaskWait_OnAJobOfASingleThreadRuntimeNobodyDrives_DrivesIt(string kind)
    {
        using SingleThreadRuntime runtime = Create(kind);
        int result = TestHelpers.OnThread(() =>
        {
            Task<int> task = runtime.Spawn(20, static async x =>
            {
                await Task.Yield();
                await Task.Delay(1);
                return x + 1;
            }).AsTask();
            task.Wait();
            return task.Result;
        });
        Assert.Equal(21, result);
    }

    [Theory]
    [MemberData(nameof(SingleThreadKinds))]
    public void AsTaskResult_OnAJobOfASingleThreadRuntimeNobodyDrives_ReturnsTheResult(string kind)
    {
        using SingleThreadRuntime runtime = Create(kind);
        int result = TestHelpers.OnThread(() => runtime.Spawn(20, static async x =>
        {
            await Task.Yield();
            return x + 1;
        }).AsTask().Result);
        Assert.Equal(21, result);
    }

    [Theory]
    [MemberData(nameof(SingleThreadKinds))]
    public void AsTask_AwaitedWhileAnotherThreadDrives_CompletesOffTheDrivingThread(string kind)
    {
        using SingleThreadRuntime runtime = Create(kind);
        Task<int> task = runtime.Spawn(1, static async x => { await Task.Yield(); return x; }).AsTask();
        Task<bool> awaiter = Task.Run(async () =>
        {
            await task;
            return runtime.IsRuntimeThread;
        });
        TestHelpers.OnThread(() =>
        {
            while (!task.IsCompleted)
            {
                runtime.RunUntilIdle();
                Thread.Sleep(1);
            }
        });
        Assert.False(awaiter.Result);
    }

    [Theory]
    [MemberData(nameof(SingleThreadKinds))]
    public void AsTaskWait_OnTheThreadThatDrivesTheRuntime_ThrowsInsteadOfHanging(string kind)
    {
        using SingleThreadRuntime runtime = Create(kind);
        Exception? error = TestHelpers.OnThread(() => runtime.Run(runtime, static rt =>
        {
            Task<int> pending = rt.Spawn(0, static async x => { await Task.Yield(); return x; }).AsTask();
            try
            {
                pending.Wait();
                return Job.FromResult<Exception?>(null);
            }
            catch (Exception e)
            {
                return Job.FromResult<Exception?>(e);
            }
        }));
        Assert.NotNull(error);
        Assert.IsType<InvalidOperationException>(error!.GetBaseException());
        Assert.Contains("drives the runtime", error.GetBaseException().Message);
    }

    [Theory]
    [MemberData(nameof(SingleThreadKinds))]
    public void TaskOnRuntimeSchedulerWait_FromAPlainThreadWhileNobodyDrives_DrivesIt(string kind)
    {
        using SingleThreadRuntime runtime = Create(kind);
        int result = TestHelpers.OnThread(() =>
        {
            Task<int> task = Task.Factory.StartNew(() => runtime.IsRuntimeThread ? 42 : -1, CancellationToken.None, TaskCreationOptions.DenyChildAttach, runtime.TaskScheduler);
            task.Wait();
            return task.Result;
        });
        Assert.Equal(42, result);
    }

    [Theory]
    [MemberData(nameof(SingleThreadKinds))]
    public void TaskOnRuntimeSchedulerWait_AfterTheRuntimeWasDisposed_ReturnsTheResultFromThePool(string kind)
    {
        // After disposal the runtime's scheduler hands tasks to the thread pool: a plain wait must
        // see them complete there instead of driving a runtime that will never run them.
        SingleThreadRuntime runtime = Create(kind);
        runtime.Dispose();
        int result = TestHelpers.OnThread(() =>
        {
            Task<int> task = Task.Factory.StartNew(() => 42, CancellationToken.None, TaskCreationOptions.DenyChildAttach, runtime.TaskScheduler);
            task.Wait();
            return task.Result;
        });
        Assert.Equal(42, result);
    }

    [Fact]
    public void Wait_OnManyThreadPoolThreadsForJobsThatSuspend_EveryWaitReturnsItsResult()
    {
        // A pool thread sleeps through a task the completion finishes (so the pool sees a blocked
        // thread and adds more); the completion races the sleeper attaching that task.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var callers = new Task<int>[64];
        for (int i = 0; i < callers.Length; i++)
        {
            int n = i;
            callers[i] = Task.Run(() =>
            {
                int sum = 0;
                for (int round = 0; round < 50; round++)
                {
                    sum += runtime.Spawn(n, static async x =>
                    {
                        await Task.Yield();
                        return x;
                    }).Wait();
                }

                return sum;
            });
        }

        Assert.True(Task.WaitAll(callers, TimeSpan.FromSeconds(120)));
        for (int i = 0; i < callers.Length; i++)
        {
            Assert.Equal(50 * i, callers[i].Result);
        }
    }
}
