using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Internal;

/// <summary>
/// The direct reads of the thread's context fields (and the builder's own Start built on them) must
/// agree with the public API in every case the public API distinguishes.
/// </summary>
public class ExecutionContextHelperTests
{
    private static readonly AsyncLocal<string?> s_local = new();

    [Fact]
    public void Direct_OnThisRuntime_IsEnabled()
    {
        // If a runtime update renames the fields, the probe turns direct access off and everything
        // stays correct but slower; this test is the reminder to look.
        Assert.True(ExecutionContextHelper.Direct);
    }

    [Fact]
    public void CaptureNonDefault_DefaultContext_IsNull()
    {
        RunOnFreshThread(() =>
        {
            PerThread state = PerThread.Current;
            Assert.Null(ExecutionContextHelper.CaptureNonDefault(state));
            Assert.True(ExecutionContextHelper.IsDefault(state));
        });
    }

    [Fact]
    public void CaptureNonDefault_AsyncLocalSet_ReturnsCurrentContext()
    {
        RunOnFreshThread(() =>
        {
            s_local.Value = "set";
            PerThread state = PerThread.Current;
            ExecutionContext? captured = ExecutionContextHelper.CaptureNonDefault(state);
            Assert.NotNull(captured);
            Assert.False(ExecutionContextHelper.IsDefault(state));
            s_local.Value = null;
            string? seen = null;
            ExecutionContext.Run(captured!, _ => seen = s_local.Value, null);
            Assert.Equal("set", seen);
        });
    }

    [Fact]
    public void CaptureNonDefault_FlowSuppressed_CapturesNothing()
    {
        RunOnFreshThread(() =>
        {
            s_local.Value = "set";
            using (ExecutionContext.SuppressFlow())
            {
                Assert.Null(ExecutionContextHelper.CaptureNonDefault(PerThread.Current));
            }
        });
    }

    [Fact]
    public void RestoreDefaultIfChanged_AfterAsyncLocalSet_ClearsIt()
    {
        RunOnFreshThread(() =>
        {
            PerThread state = PerThread.Current;
            s_local.Value = "leaked";
            ExecutionContextHelper.RestoreDefaultIfChanged(state);
            Assert.Null(s_local.Value);
            Assert.True(ExecutionContextHelper.IsDefault(state));
        });
    }

    private static async Job<int> SetBothSynchronously(SynchronizationContext context)
    {
        s_local.Value = "inner";
        SynchronizationContext.SetSynchronizationContext(context);
        return 1;
    }

    [Fact]
    public void Start_SynchronousMethodChangesContexts_CallerSeesItsOwnAgain()
    {
        RunOnFreshThread(() =>
        {
            s_local.Value = "outer";
            Job<int> job = SetBothSynchronously(new SynchronizationContext());
            Assert.True(job.IsCompleted);
            Assert.Equal("outer", s_local.Value);
            Assert.Null(SynchronizationContext.Current);
            Assert.Equal(1, job.Wait());
        });
    }

    private static async Job<(string? Local, bool OnRuntime)> SetLocalAwaitTaskThenReport(JobRuntime runtime, Task gate)
    {
        s_local.Value = "flowed";
        await gate;
        return (s_local.Value, SchedulerContext.Current?.Runtime == runtime);
    }

    [Fact]
    public void ForeignAwait_WithAsyncLocalOnRuntime_ResumesOnRuntimeWithContext()
    {
        // Both a non-default context and a runtime to resume on: the pooled pair path.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        for (int i = 0; i < 50; i++)
        {
            var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Job<(string? Local, bool OnRuntime)> job = runtime.Spawn((runtime, gate.Task), static s => SetLocalAwaitTaskThenReport(s.runtime, s.Task));
            Task.Run(gate.SetResult).Wait();
            (string? local, bool onRuntime) = job.Wait();
            Assert.Equal("flowed", local);
            Assert.True(onRuntime);
        }
    }

    [Fact]
    public void ForeignAwait_DefaultContextOnCurrentThreadRuntime_ResumesOnItsThread()
    {
        using var runtime = new CurrentThreadRuntime();
        var gate = new TaskCompletionSource();
        Job<(string? Local, bool OnRuntime)> job = runtime.Spawn((runtime, gate.Task), static s => SetLocalAwaitTaskThenReport(s.runtime, s.Task));
        var completer = Task.Run(async () =>
        {
            await Task.Delay(10);
            gate.SetResult();
        });
        (string? local, bool onRuntime) = runtime.Run(job, static j => j);
        completer.Wait();
        Assert.Equal("flowed", local);
        Assert.True(onRuntime);
    }

    private static void RunOnFreshThread(System.Action body)
    {
        System.Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                body();
            }
            catch (System.Exception e)
            {
                failure = e;
            }
        });
        thread.Start();
        thread.Join();
        if (failure is not null)
        {
            throw new Xunit.Sdk.XunitException("failed on the fresh thread: " + failure);
        }
    }
}
