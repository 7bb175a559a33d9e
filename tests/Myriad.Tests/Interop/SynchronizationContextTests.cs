using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Interop;

/// <summary>
/// Library code never hands a caller's SynchronizationContext (or TaskScheduler) to jobs, and nothing
/// a job or task installs on a runtime thread leaks into later, unrelated work there.
/// </summary>
public class SynchronizationContextTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    /// <summary>A UI-like context whose thread is busy: posts are counted and never run.</summary>
    private sealed class UnpumpedContext : SynchronizationContext
    {
        public int Posts;

        public override void Post(SendOrPostCallback d, object? state) => Interlocked.Increment(ref Posts);
    }

    private static bool FinishesOnThreadWith(SynchronizationContext context, Action body)
    {
        Exception? error = null;
        var thread = new Thread(() =>
        {
            SynchronizationContext.SetSynchronizationContext(context);
            try
            {
                body();
            }
            catch (Exception e)
            {
                error = e;
            }
        }) { IsBackground = true };
        thread.Start();
        bool finished = thread.Join(Timeout);
        Assert.Null(error);
        return finished;
    }

    private static async Job<int> DelayThenOne()
    {
        await Task.Delay(10);
        return 1;
    }

    [Fact]
    public void MultiThreadRun_FromThreadWithSynchronizationContext_CompletesWithoutPostingThere()
    {
        // Running the job inline on the waiting thread would let its Task await capture the
        // context and post the resume to a thread blocked in Run: a deadlock.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var context = new UnpumpedContext();
        Assert.True(FinishesOnThreadWith(context, () => Assert.Equal(1, runtime.Run(static () => DelayThenOne()))), "Run hung");
        Assert.Equal(0, context.Posts);
    }

    [Fact]
    public void DirectJobWait_OnThreadWithSynchronizationContext_CompletesWithoutPostingThere()
    {
        // An async Job method called directly (no runtime) runs its first step on the caller's
        // thread; the Task it awaits must not capture the caller's context for the job's resume, or
        // the caller, blocked in Wait, would never run it.
        var context = new UnpumpedContext();
        Assert.True(FinishesOnThreadWith(context, () => Assert.Equal(1, DelayThenOne().Wait())), "Wait hung");
        Assert.Equal(0, context.Posts);
    }

    [Fact]
    public void DirectJobAwaitingTaskYield_OnThreadWithSynchronizationContext_CompletesWithoutPostingThere()
    {
        var context = new UnpumpedContext();
        Assert.True(FinishesOnThreadWith(context, () => Assert.Equal(2, YieldThenTwo().Wait())), "Wait hung");
        Assert.Equal(0, context.Posts);

        static async Job<int> YieldThenTwo()
        {
            await Task.Yield();
            return 2;
        }
    }

    [Fact]
    public void DirectJob_AwaitingATaskOnThreadWithSynchronizationContext_LeavesTheCallersContextInPlace()
    {
        var context = new UnpumpedContext();
        SynchronizationContext? afterCall = null;
        Job<int> job = default;
        Assert.True(FinishesOnThreadWith(context, () =>
        {
            job = DelayThenOne();
            afterCall = SynchronizationContext.Current;
        }), "the call hung");
        Assert.Same(context, afterCall);
        Assert.Equal(1, job.Wait());
    }

    [Fact]
    public void DirectJob_CalledFromAPumpedContext_ResumesOffThatContextsThread()
    {
        using var ui = new Support.SingleThreadSynchronizationContext();
        bool? resumedOnUi = null;
        Task<int> caller = ui.Run(() =>
        {
            return Task.FromResult(Body().Wait());

            async Job<int> Body()
            {
                await Task.Delay(10);
                resumedOnUi = ui.IsCurrentThread;
                return 3;
            }
        });
        Assert.True(caller.Wait(Timeout), "Wait on the context's thread hung");
        Assert.Equal(3, caller.Result);
        Assert.False(resumedOnUi);
    }

    [Fact]
    public void CurrentThreadRun_FromThreadWithSynchronizationContext_CompletesAndRestoresIt()
    {
        using var runtime = new CurrentThreadRuntime();
        var context = new UnpumpedContext();
        SynchronizationContext? afterRun = null;
        SynchronizationContext? insideJob = context;
        Assert.True(FinishesOnThreadWith(context, () =>
        {
            Assert.Equal(1, runtime.Run(() =>
            {
                insideJob = SynchronizationContext.Current;
                return DelayThenOne();
            }));
            afterRun = SynchronizationContext.Current;
        }), "Run hung");
        Assert.Null(insideJob);
        Assert.Same(context, afterRun);
        Assert.Equal(0, context.Posts);
    }

    [Fact]
    public void SpawnedJob_AfterAJobThatSetASynchronizationContext_SeesNone()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var context = new UnpumpedContext();
        runtime.Spawn(context, static async c =>
        {
            await Job.Delay(1);
            SynchronizationContext.SetSynchronizationContext(c);
        }).Wait();
        SynchronizationContext? seen = runtime.Run(static () => Job.FromResult(SynchronizationContext.Current));
        Assert.Null(seen);
    }

    [Fact]
    public void FlowSuppressedTask_OnRuntimeScheduler_DoesNotLeakAsyncLocalToTheNextTask()
    {
        var local = new AsyncLocal<int>();
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task<int> second;
        using (ExecutionContext.SuppressFlow())
        {
            Task.Factory.StartNew(() => local.Value = 99, CancellationToken.None, TaskCreationOptions.None, runtime.TaskScheduler).Wait();
            second = Task.Factory.StartNew(() => local.Value, CancellationToken.None, TaskCreationOptions.None, runtime.TaskScheduler);
        }

        Assert.Equal(0, second.Result);
    }

    private static readonly AsyncLocal<int> s_local = new();

    [Fact]
    public void CurrentThreadRun_KeepsTheCallersAsyncLocalValues()
    {
        // The drive loop resets the thread after each item to what it had before the item, which
        // is the caller's context here, not the default one.
        int after = Myriad.Tests.Support.TestHelpers.OnThread(() =>
        {
            using var runtime = new CurrentThreadRuntime();
            s_local.Value = 42;
            runtime.Run(static async () => await Task.Yield());
            return s_local.Value;
        });
        Assert.Equal(42, after);
    }

    [Fact]
    public void BlockingWaitOnAWorker_KeepsTheWaitingJobsAsyncLocalValues()
    {
        // While it waits, the worker runs other items; each must leave the waiting job's context.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        int seen = Myriad.Tests.Support.TestHelpers.OnThread(() => runtime.Spawn(runtime, static async rt =>
        {
            await Task.Delay(1); // now on the worker
            s_local.Value = 7;
            rt.Spawn(static async () => await Task.Delay(20)).Wait();
            return s_local.Value;
        }).Wait());
        Assert.Equal(7, seen);
    }
}
