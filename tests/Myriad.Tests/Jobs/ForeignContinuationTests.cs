using System;
using System.Collections.Concurrent;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Jobs;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// Continuations that are not Myriad's own run inline inside a completion; when one throws, its
/// exception goes to <see cref="ThrowHelper.ContinuationFailed"/> instead of unwinding through the
/// completing job (which would skip the trampoline's depth bookkeeping and the builder's context
/// restore). The hook is process-wide, hence the serialized collection.
/// </summary>
[Collection(HeavyCollection.Name)]
public class ForeignContinuationTests
{
    private static readonly AsyncLocal<string?> s_local = new();

    private static async Job<int> AwaitThenAdd(Job<int> source) => await source + 1;

    private static async Job<int> CompleteInside(Promise<int> promise)
    {
        s_local.Value = "inside";
        promise.SetResult(1); // resumes AwaitThenAdd inline, which completes and runs the raw continuation
        return 5;
    }

    [Fact]
    public void RawActionContinuation_Throws_GoesToHookAndCallerStateIsIntact()
    {
        AssertThrowingContinuationIsContained(static job => job.GetAwaiter().UnsafeOnCompleted(static () => throw new FormatException("raw continuation")));
    }

    [Fact]
    public void ValueTaskConsumerCallback_Throws_GoesToHookAndCallerStateIsIntact()
    {
        AssertThrowingContinuationIsContained(static job => job.AsValueTask().GetAwaiter().OnCompleted(static () => throw new FormatException("value task callback")));
    }

    private static void AssertThrowingContinuationIsContained(Action<Job<int>> registerThrowing)
    {
        var seen = new ConcurrentQueue<Exception>();
        Action<Exception> original = ThrowHelper.ContinuationFailed;
        ThrowHelper.ContinuationFailed = seen.Enqueue;
        try
        {
            TestHelpers.OnThread(() =>
            {
                var promise = new Promise<int>();
                registerThrowing(AwaitThenAdd(promise.Job));
                Job<int> outer = CompleteInside(promise);

                Assert.True(outer.IsCompleted);
                Assert.Equal(5, outer.Wait());
                Assert.Null(s_local.Value);                  // the builder restored the caller's context
                Assert.Equal(0, PerThread.Current.Depth);    // and the trampoline's depth
                Assert.Equal(3, AwaitThenAdd(Job.FromResult(2)).Wait()); // and the thread still works
                return 0;
            });
            Exception failure = Assert.Single(seen);
            Assert.IsType<FormatException>(failure);
        }
        finally
        {
            ThrowHelper.ContinuationFailed = original;
        }
    }

    /// <summary>The four awaiters whose <c>OnCompleted</c> flows the ExecutionContext.</summary>
    public enum AwaiterKind
    {
        Job,
        JobOfT,
        ConfiguredJob,
        ConfiguredJobOfT,
    }

    private static void RegisterOnCompleted(AwaiterKind kind, Job<VoidResult> job, Action continuation)
    {
        switch (kind)
        {
            case AwaiterKind.Job:
                Job.FromUntyped(job).GetAwaiter().OnCompleted(continuation);
                break;
            case AwaiterKind.JobOfT:
                job.GetAwaiter().OnCompleted(continuation);
                break;
            case AwaiterKind.ConfiguredJob:
                Job.FromUntyped(job).ConfigureAwait(false).GetAwaiter().OnCompleted(continuation);
                break;
            default:
                job.ConfigureAwait(false).GetAwaiter().OnCompleted(continuation);
                break;
        }
    }

    /// <summary>
    /// Runs <paramref name="body"/> on a new thread in the default ExecutionContext: started without
    /// flowing the test runner's context, so that "nothing set" really is the default context.
    /// </summary>
    private static void OnDefaultContextThread(Action body)
    {
        ExceptionDispatchInfo? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                body();
            }
            catch (Exception e)
            {
                failure = ExceptionDispatchInfo.Capture(e);
            }
        }) { IsBackground = true };
        thread.UnsafeStart();
        Assert.True(thread.Join(TestHelpers.DefaultTimeout), "the thread did not finish");
        failure?.Throw();
    }

    [Theory]
    [InlineData(AwaiterKind.Job)]
    [InlineData(AwaiterKind.JobOfT)]
    [InlineData(AwaiterKind.ConfiguredJob)]
    [InlineData(AwaiterKind.ConfiguredJobOfT)]
    public void OnCompleted_RegisteredInTheDefaultContext_RunsInItAndLeavesTheCompletersContextsAlone(AwaiterKind kind)
    {
        // As a TaskCompletionSource's Task: the default context is a context too. The continuation
        // runs inline on the completing thread, but sees nothing of the completer's AsyncLocals,
        // and what it sets (an AsyncLocal, a SynchronizationContext) stays with it.
        var promise = new Promise<VoidResult>();
        string? seen = "unset", after = "unset";
        bool completerHasSyncContext = true;
        OnDefaultContextThread(() => RegisterOnCompleted(kind, promise.Job, () =>
        {
            seen = s_local.Value;
            s_local.Value = "continuation";
            SynchronizationContext.SetSynchronizationContext(new SynchronizationContext());
        }));
        OnDefaultContextThread(() =>
        {
            s_local.Value = "completer";
            promise.SetResult(default);
            after = s_local.Value;
            completerHasSyncContext = SynchronizationContext.Current is not null;
        });

        Assert.Null(seen);
        Assert.Equal("completer", after);
        Assert.False(completerHasSyncContext, "the continuation's SynchronizationContext leaked to the completer");
    }

    [Theory]
    [InlineData(AwaiterKind.Job)]
    [InlineData(AwaiterKind.JobOfT)]
    [InlineData(AwaiterKind.ConfiguredJob)]
    [InlineData(AwaiterKind.ConfiguredJobOfT)]
    public void OnCompleted_RegisteredUnderAnAsyncLocal_RunsInThatContextAndLeavesTheCompletersContextsAlone(AwaiterKind kind)
    {
        var promise = new Promise<VoidResult>();
        string? seen = "unset", after = "unset";
        bool completerHasSyncContext = true;
        OnDefaultContextThread(() =>
        {
            s_local.Value = "registrar";
            RegisterOnCompleted(kind, promise.Job, () =>
            {
                seen = s_local.Value;
                s_local.Value = "continuation";
                SynchronizationContext.SetSynchronizationContext(new SynchronizationContext());
            });
        });
        OnDefaultContextThread(() =>
        {
            s_local.Value = "completer";
            promise.SetResult(default);
            after = s_local.Value;
            completerHasSyncContext = SynchronizationContext.Current is not null;
        });

        Assert.Equal("registrar", seen);
        Assert.Equal("completer", after);
        Assert.False(completerHasSyncContext, "the continuation's SynchronizationContext leaked to the completer");
    }

    [Fact]
    public void OnCompleted_CompletedAlready_RunsNowInTheDefaultContextAndLeavesTheRegistrarsAlone()
    {
        // A completed job runs the continuation inside the registration, on the registrar's thread:
        // what it sets must not stay on that thread either.
        string? after = "unset";
        OnDefaultContextThread(() =>
        {
            var promise = new Promise<VoidResult>();
            promise.SetResult(default);
            promise.Job.GetAwaiter().OnCompleted(static () => s_local.Value = "continuation");
            after = s_local.Value;
            promise.Job.GetAwaiter().GetResult();
        });

        Assert.Null(after);
    }

    [Fact]
    public void UnsafeOnCompleted_NothingToHonour_RegistersTheBareActionWithoutAllocating()
    {
        // The fast path of async Task code awaiting a job (the compiler calls UnsafeOnCompleted):
        // no ExecutionContext flows, so a thread without a SynchronizationContext or TaskScheduler
        // registers the action itself, in the default context and under an AsyncLocal alike.
        OnDefaultContextThread(() =>
        {
            Action action = static () => { };
            Assert.Same(action, ForeignContinuation.ForAction(action, flowExecutionContext: false, continueOnCapturedContext: true));
            s_local.Value = "set";
            Assert.Same(action, ForeignContinuation.ForAction(action, flowExecutionContext: false, continueOnCapturedContext: true));
            Assert.Same(action, ForeignContinuation.ForAction(action, flowExecutionContext: false, continueOnCapturedContext: false));
        });
    }

    [Fact]
    public void OnCompleted_FlowSuppressed_RegistersTheBareAction()
    {
        // As a Task: with the flow suppressed there is no context to run in.
        OnDefaultContextThread(() =>
        {
            Action action = static () => { };
            using (ExecutionContext.SuppressFlow())
            {
                Assert.Same(action, ForeignContinuation.ForAction(action, flowExecutionContext: true, continueOnCapturedContext: true));
            }
        });
    }

    [Fact]
    public void OnCompleted_RegisteredInATaskOfTheRuntimesScheduler_RunsOnAWorkerInTheDefaultContextAndTheWorkerIsResetAfter()
    {
        // The captured TaskScheduler is the runtime's: the continuation runs as a task on its worker,
        // a task that the completing thread starts, and so with the completer's ExecutionContext
        // unless the continuation restores its own. The worker must then be clean for its next job.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var promise = new Promise<VoidResult>();
        var ran = new TaskCompletionSource<(string? Local, bool OnRuntime)>(TaskCreationOptions.RunContinuationsAsynchronously);
        OnDefaultContextThread(() => Task.Factory.StartNew(
            () => promise.Job.GetAwaiter().OnCompleted(() =>
            {
                ran.SetResult((s_local.Value, runtime.IsRuntimeThread));
                s_local.Value = "continuation";
                SynchronizationContext.SetSynchronizationContext(new SynchronizationContext());
            }),
            CancellationToken.None,
            TaskCreationOptions.DenyChildAttach,
            runtime.TaskScheduler).Wait(TestHelpers.DefaultTimeout));
        OnDefaultContextThread(() =>
        {
            s_local.Value = "completer";
            promise.SetResult(default);
        });

        Assert.True(ran.Task.Wait(TestHelpers.DefaultTimeout));
        Assert.Equal((null, true), ran.Task.Result);

        // A detached spawn runs on the worker (nobody can run it inline), after the continuation.
        var next = new TaskCompletionSource<(string? Local, bool SyncContext)>(TaskCreationOptions.RunContinuationsAsynchronously);
        OnDefaultContextThread(() => runtime.SpawnDetached(next, static n => n.SetResult((s_local.Value, SynchronizationContext.Current is not null))));
        Assert.True(next.Task.Wait(TestHelpers.DefaultTimeout));
        Assert.Equal((null, false), next.Task.Result);
    }

    [Fact]
    public void OnCompleted_CompletedByAJobOfADeterministicRuntime_RunsBeforeTheDriveReturns()
    {
        // On a deterministic runtime's driving thread a completion queues its continuation (the seed
        // orders wake-ups); a drive runs the queued wake-ups of code outside the runtime before it
        // returns. A continuation left queued would wait for the next drive, or for the disposal.
        // Several seeds: the continuation and the drive's own wake-up are queued together, and the
        // seed picks which of them runs first.
        for (int seed = 0; seed < 20; seed++)
        {
            using var runtime = new DeterministicRuntime(seed);
            var promise = new Promise<VoidResult>();
            using var ran = new ManualResetEventSlim();
            OnDefaultContextThread(() => promise.Job.GetAwaiter().OnCompleted(ran.Set));
            runtime.Run(promise, static p =>
            {
                p.SetResult(default);
                return Job.CompletedJob;
            });

            Assert.True(ran.Wait(TestHelpers.DefaultTimeout), $"the continuation did not run (seed {seed})");
        }
    }
}
