using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Jobs;
using Xunit;

namespace Myriad.Tests.Jobs;

public class JobTests
{
    private static async Job<int> AddOneSync(int x) => x + 1;

    private static async Job NothingSync()
    {
    }

    private static async Job<int> AwaitThenAdd(Job<int> source, int add) => await source + add;

    private static async Job<int> ThrowSync() => throw new InvalidOperationException("sync failure");

    private static async Job<int> ThrowAfterAwait(Job<int> gate)
    {
        await gate;
        throw new FormatException("async failure");
    }

    private static Job<int> Pending(out Promise<int> promise)
    {
        promise = new Promise<int>();
        return promise.Job;
    }

    [Fact]
    public void AsyncJob_CompletesSynchronously_ResultIsInline()
    {
        Job<int> job = AddOneSync(41);
        Assert.True(job.IsCompleted);
        Assert.True(job.IsCompletedSuccessfully);
        Assert.Null(job._box);
        Assert.Equal(42, job.Wait());
    }

    [Fact]
    public void NonGenericJob_CompletesSynchronously_IsCompleted()
    {
        Job job = NothingSync();
        Assert.True(job.IsCompleted);
        job.Wait();
    }

    [Fact]
    public void Await_PendingJob_ResumesWithResultWhenCompleted()
    {
        Job<int> job = AwaitThenAdd(Pending(out Promise<int> promise), 10);
        Assert.False(job.IsCompleted);
        promise.SetResult(5);
        Assert.True(job.IsCompleted);
        Assert.Equal(15, job.Wait());
    }

    [Fact]
    public void Await_JobTwice_ThrowsInvalidOperationNamingTheMisuse()
    {
        Job<int> inner = Pending(out Promise<int> promise);
        Job<int> first = AwaitThenAdd(inner, 1);
        // The misuse is detected at the second await; inside an async method it faults that job.
        Job<int> second = AwaitThenAdd(inner, 2);
        var error = Assert.Throws<InvalidOperationException>(() => second.Wait());
        Assert.Contains("awaited twice", error.Message);
        Assert.Throws<InvalidOperationException>(() => inner.GetAwaiter().UnsafeOnCompleted(() => { }));
        promise.SetResult(1);
        Assert.Equal(2, first.Wait());
    }

    [Fact]
    public void GetResult_AfterConsumed_ThrowsInvalidOperation()
    {
        Job<int> job = AwaitThenAdd(Pending(out Promise<int> promise), 1);
        promise.SetResult(1);
        Assert.Equal(2, job.Wait());
        var error = Assert.Throws<InvalidOperationException>(() => job.Wait());
        Assert.Contains("no longer valid", error.Message);
        Assert.Throws<InvalidOperationException>(() => job.GetAwaiter().IsCompleted);
    }

    [Fact]
    public void PooledBox_ReusedByAnotherJob_OldHandleCannotReadNewResult()
    {
        Job<int> first = AwaitThenAdd(Pending(out Promise<int> p1), 0);
        p1.SetResult(1);
        Assert.Equal(1, first.Wait());
        // The box went back to the pool; the next job of the same method takes it again.
        Job<int> second = AwaitThenAdd(Pending(out Promise<int> p2), 0);
        p2.SetResult(2);
        Assert.Throws<InvalidOperationException>(() => first.Wait());
        Assert.Equal(2, second.Wait());
    }

    [Fact]
    public void SyncException_PropagatesToAwaiter()
    {
        Job<int> job = ThrowSync();
        Assert.True(job.IsCompleted);
        Assert.False(job.IsCompletedSuccessfully);
        var error = Assert.Throws<InvalidOperationException>(() => job.Wait());
        Assert.Equal("sync failure", error.Message);
    }

    [Fact]
    public void AsyncException_PropagatesWithOriginalStackTrace()
    {
        Job<int> job = ThrowAfterAwait(Pending(out Promise<int> gate));
        gate.SetResult(0);
        var error = Assert.Throws<FormatException>(() => job.Wait());
        Assert.Contains(nameof(ThrowAfterAwait), error.StackTrace);
    }

    [Fact]
    public void Cancellation_SurfacesAsOperationCanceled()
    {
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        Job<int> job = Job.FromCanceled<int>(cts.Token);
        var error = Assert.Throws<OperationCanceledException>(() => job.Wait());
        Assert.Equal(cts.Token, error.CancellationToken);
        Assert.Throws<ArgumentOutOfRangeException>(() => Job.FromCanceled(CancellationToken.None));
    }

    [Fact]
    public void Factories_ProduceCompletedJobs()
    {
        Assert.Equal(7, Job.FromResult(7).Wait());
        Assert.True(Job.CompletedJob.IsCompleted);
        Assert.Throws<ArgumentNullException>(() => Job.FromException(null!));
        Assert.Throws<TimeoutException>(() => Job.FromException(new TimeoutException()).Wait());
        Assert.Throws<TimeoutException>(() => Job.FromException<int>(new TimeoutException()).Wait());
    }

    [Fact]
    public async Task AsValueTask_AndAsTask_CompleteWithTheJob()
    {
        Job<int> job = AwaitThenAdd(Pending(out Promise<int> p1), 1);
        ValueTask<int> vt = job.AsValueTask();
        Assert.False(vt.IsCompleted);
        p1.SetResult(1);
        Assert.Equal(2, await vt);

        Job<int> job2 = AwaitThenAdd(Pending(out Promise<int> p2), 1);
        Task<int> task = job2.AsTask();
        p2.SetException(new ArithmeticException());
        await Assert.ThrowsAsync<ArithmeticException>(() => task);

        Assert.Equal(3, await Job.FromResult(3).AsTask());
    }

    [Fact]
    public async Task AsValueTask_Canceled_ReportsCanceledStatus()
    {
        Job<int> job = AwaitThenAdd(Pending(out Promise<int> p), 1);
        Task<int> task = job.AsTask();
        p.TrySetCanceled();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => task);
        Assert.True(task.IsCanceled);
    }

    private static async Job<int> AwaitForeign()
    {
        int sum = await Task.FromResult(1);
        sum += await new ValueTask<int>(2);
        await Task.Delay(5);
        await Task.Delay(1).ConfigureAwait(false);
        sum += await Task.Run(() => 3).ConfigureAwait(false);
        await Task.Yield();
        return sum;
    }

    [Fact]
    public void AsyncJob_AwaitsTasksValueTasksAndDelays()
    {
        Assert.Equal(6, AwaitForeign().Wait());
    }

    private static readonly AsyncLocal<string?> s_local = new();

    private static async Job<string?> ReadLocalAfterAwait(Job<int> gate)
    {
        await gate;
        return s_local.Value;
    }

    [Fact]
    public void AsyncLocal_FlowsAcrossAwait()
    {
        s_local.Value = "flowed";
        Job<string?> job = ReadLocalAfterAwait(Pending(out Promise<int> gate));
        s_local.Value = null;
        // Completed on another thread with no AsyncLocal set: the value must still flow.
        Task.Run(() => gate.SetResult(0)).Wait();
        Assert.Equal("flowed", job.Wait());
    }

    private static async Job SetLocalAndAwait(Job<int> gate)
    {
        s_local.Value = "inner";
        await gate;
    }

    [Fact]
    public void AsyncLocal_SetInsideJob_DoesNotLeakToCaller()
    {
        s_local.Value = "outer";
        Job job = SetLocalAndAwait(Pending(out Promise<int> gate));
        Assert.Equal("outer", s_local.Value);
        gate.SetResult(0);
        Assert.Equal("outer", s_local.Value);
        job.Wait();
    }

    [Fact]
    public void WhenAll_CollectsResultsInOrder()
    {
        Job<int> a = AwaitThenAdd(Pending(out Promise<int> pa), 0);
        Job<int> b = AwaitThenAdd(Pending(out Promise<int> pb), 0);
        Job<int[]> all = Job.WhenAll(a, b, Job.FromResult(3));
        pb.SetResult(2);
        Assert.False(all.IsCompleted);
        pa.SetResult(1);
        Assert.Equal(new[] { 1, 2, 3 }, all.Wait());
    }

    [Fact]
    public void WhenAll_WithFailure_ThrowsFirstAfterAllComplete()
    {
        Job<int> a = AwaitThenAdd(Pending(out Promise<int> pa), 0);
        Job<int> b = Job.FromException<int>(new DivideByZeroException());
        Job<int[]> all = Job.WhenAll(a, b);
        Assert.False(all.IsCompleted);
        pa.SetResult(1);
        Assert.Throws<DivideByZeroException>(() => all.Wait());
        Assert.Throws<ArgumentNullException>(() => Job.WhenAll((Job[])null!));
    }

    [Fact]
    public void WhenAny_ReturnsIndexOfFirstCompleted()
    {
        Job<int> a = AwaitThenAdd(Pending(out Promise<int> pa), 0);
        Job<int> b = AwaitThenAdd(Pending(out Promise<int> pb), 0);
        Job<(int Index, Job<int> Winner)> any = Job.WhenAny(a, b);
        Assert.False(any.IsCompleted);
        pb.SetResult(20);
        (int index, Job<int> winner) = any.Wait();
        Assert.Equal((1, 20), (index, winner.Wait()));
        pa.SetResult(10);
        Assert.Throws<ArgumentException>(() => Job.WhenAny(Array.Empty<Job>()));
    }

    [Fact]
    public void Promise_CompletesOnce()
    {
        var promise = new Promise<int>();
        Assert.True(promise.TrySetResult(1));
        Assert.False(promise.TrySetResult(2));
        Assert.Throws<InvalidOperationException>(() => promise.SetResult(3));
        Job<int> job = promise.Job;
        Assert.Equal(1, job.Wait());
        Assert.Throws<InvalidOperationException>(() => job.Wait());
    }

    [Fact]
    public void Wait_FromPlainThread_BlocksUntilCompletedElsewhere()
    {
        Job<int> job = AwaitThenAdd(Pending(out Promise<int> promise), 1);
        var completer = new Thread(() =>
        {
            Thread.Sleep(50);
            promise.SetResult(41);
        });
        completer.Start();
        var watch = Stopwatch.StartNew();
        Assert.Equal(42, job.Wait());
        completer.Join();
    }

    [Fact]
    public void ImplicitConversion_FromResult_IsCompleted()
    {
        Job<string> job = "x";
        Assert.Equal("x", job.Wait());
    }

    [Fact]
    public void AsJob_DropsResultButKeepsFailure()
    {
        AwaitThenAdd(Job.FromResult(1), 1).AsJob().Wait();
        Assert.Throws<FormatException>(() => ThrowAfterAwait(Job.FromResult(0)).AsJob().Wait());
    }

    [Fact]
    public void SynchronizationContext_IsNotCapturedByJobAwaits()
    {
        var context = new CountingContext();
        SynchronizationContext? previous = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(context);
        try
        {
            Job<int> job = AwaitThenAdd(Pending(out Promise<int> promise), 1);
            promise.SetResult(1);
            Assert.Equal(2, job.Wait());
            Assert.Equal(0, context.Posts);
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }
    }

    private sealed class CountingContext : SynchronizationContext
    {
        public int Posts;

        public override void Post(SendOrPostCallback d, object? state)
        {
            Interlocked.Increment(ref Posts);
            base.Post(d, state);
        }
    }

    /// <summary>A non-Myriad awaiter that keeps its continuation for the test to call (and call again).</summary>
    private sealed class HeldContinuation : System.Runtime.CompilerServices.ICriticalNotifyCompletion
    {
        public Action? Continuation;

        public HeldContinuation GetAwaiter() => this;

        public bool IsCompleted => false;

        public void GetResult()
        {
        }

        public void OnCompleted(Action continuation) => Continuation = continuation;

        public void UnsafeOnCompleted(Action continuation) => Continuation = continuation;
    }

    private static async Job<int> AwaitHeld(HeldContinuation held)
    {
        await held;
        return 7;
    }

    [Fact]
    public void AwaitForeign_AwaiterCallsItsContinuationTwice_SecondCallThrows()
    {
        var held = new HeldContinuation();
        Job<int> job = AwaitHeld(held);
        Action continuation = held.Continuation!;

        continuation();
        var beforeConsumed = Assert.Throws<InvalidOperationException>(continuation);
        Assert.Equal(7, job.Wait());
        var afterConsumed = Assert.Throws<InvalidOperationException>(continuation);

        Assert.Contains("twice", beforeConsumed.Message, StringComparison.Ordinal);
        Assert.Contains("twice", afterConsumed.Message, StringComparison.Ordinal);
    }

    private static async Job<int> AddOneAfter(Job<int> source) => await source + 1;

    private static async Job<int> CatchAwaitedTwiceThenSuspend(Job<int> shared, Job<int> later, int[] passes)
    {
        try
        {
            await shared; // already awaited by someone else: the registration throws
        }
        catch (InvalidOperationException)
        {
        }

        passes[0]++;
        return await later + 1;
    }

    private sealed class RefusingAwaiter : System.Runtime.CompilerServices.ICriticalNotifyCompletion
    {
        public RefusingAwaiter GetAwaiter() => this;

        public bool IsCompleted => false;

        public void GetResult()
        {
        }

        public void OnCompleted(Action continuation) => throw new NotSupportedException("refused");

        public void UnsafeOnCompleted(Action continuation) => throw new NotSupportedException("refused");
    }

    private static async Job<int> CatchRefusalThenSuspend(Job<int> later, int[] passes)
    {
        try
        {
            await new RefusingAwaiter();
        }
        catch (NotSupportedException)
        {
        }

        passes[0]++;
        return await later + 1;
    }

    [Fact]
    public void AwaitJobTwice_MethodCatchesAndSuspendsLater_ResumesWhereItIs()
    {
        // The failed first suspension had already copied the state machine into a box; the method
        // runs on, and its next suspension must not resume that stale copy.
        var first = new Promise<int>();
        var later = new Promise<int>();
        var passes = new int[1];
        Job<int> shared = first.Job;
        Job<int> owner = AddOneAfter(shared);
        Job<int> job = CatchAwaitedTwiceThenSuspend(shared, later.Job, passes);

        later.SetResult(41);
        Assert.Equal(42, Support.TestHelpers.OnThread(() => job.Wait(), timeout: TimeSpan.FromSeconds(10)));
        Assert.Equal(1, passes[0]);
        first.SetResult(1);
        Assert.Equal(2, owner.Wait());
    }

    [Fact]
    public void ForeignAwaiterRefusesContinuation_MethodCatchesAndSuspendsLater_ResumesWhereItIs()
    {
        var later = new Promise<int>();
        var passes = new int[1];
        Job<int> job = CatchRefusalThenSuspend(later.Job, passes);

        later.SetResult(41);
        Assert.Equal(42, Support.TestHelpers.OnThread(() => job.Wait(), timeout: TimeSpan.FromSeconds(10)));
        Assert.Equal(1, passes[0]);
    }

    [Fact]
    public void AsTask_PendingPromiseCanceledOrFailed_TaskEndsTheSameWayWithThePromisesException()
    {
        var canceledPromise = new Promise<int>();
        Task<int> canceledTask = canceledPromise.Job.AsTask();
        var canceled = new OperationCanceledException("stopped", new CancellationToken(true));
        canceledPromise.SetException(canceled);
        Assert.True(canceledTask.IsCanceled);
        Assert.Same(canceled, Assert.ThrowsAny<OperationCanceledException>(() => canceledTask.GetAwaiter().GetResult()));

        var failedPromise = new Promise<int>();
        Task failedTask = failedPromise.Job.AsJob().AsTask(); // the untyped task
        var error = new FormatException("bad");
        failedPromise.SetException(error);
        Assert.True(failedTask.IsFaulted);
        Assert.Same(error, Assert.Throws<FormatException>(() => failedTask.GetAwaiter().GetResult()));
    }

    [Fact]
    public void AsTask_AwaitedTwice_Throws()
    {
        var promise = new Promise<int>();
        Job<int> job = promise.Job;
        _ = job.AsTask();
        Assert.Throws<InvalidOperationException>(() => { _ = job.AsTask(); });
    }

    [Fact]
    public void AsValueTask_OfAJobAwaitedElsewhereOrConsumed_ThrowsAtTheConversion()
    {
        // Not at the ValueTask's await: from async Task code that registration's exception goes to
        // the thread pool and ends the process.
        var promise = new Promise<int>();
        Job<int> job = promise.Job;
        Task<int> first = job.AsTask();
        Assert.Throws<InvalidOperationException>(() => { _ = job.AsValueTask(); });
        promise.SetResult(4);
        Assert.Equal(4, first.Result);
        Assert.Throws<InvalidOperationException>(() => { _ = job.AsValueTask(); }); // consumed by the task
    }

    [Fact]
    public void AsValueTask_OfAnUntypedJobAwaitedElsewhere_ThrowsAtTheConversion()
    {
        var promise = new Promise<int>();
        Job job = Waiting(promise.Job);
        Task first = job.AsTask();
        Assert.Throws<InvalidOperationException>(() => { _ = job.AsValueTask(); });
        promise.SetResult(1);
        first.Wait();

        static async Job Waiting(Job<int> inner) => await inner;
    }

    [Fact]
    public void AsTask_OfASelectWhoseHandlerThrows_FaultsTheTaskAndLeavesTheSenderAlone()
    {
        // A select's handler runs when its result is read: never inside the send that completed it.
        using var runtime = new Myriad.Scheduling.MultiThreadRuntime(new Myriad.Scheduling.RuntimeOptions { WorkerCount = 2 });
        var ch = Myriad.Channels.Chan.Unbuffered<int>();
        var boom = new InvalidOperationException("handler boom");
        Task<int> selected = Myriad.Channels.Select.Receive(ch, (int _) => throw boom).AsJob().AsTask();
        runtime.Run(ch, static async c => await c.SendAsync(1)); // throws if the handler ran inside the send
        Assert.True(((IAsyncResult)selected).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(10)), "the select's task never completed");
        Assert.Same(boom, Assert.Throws<InvalidOperationException>(() => selected.GetAwaiter().GetResult()));
    }

    [Fact]
    public void IsFaultedAndIsCanceled_EachOutcome_MatchValueTask()
    {
        Assert.False(AddOneSync(1).IsFaulted);
        Assert.False(AddOneSync(1).IsCanceled);

        Job<int> pending = Pending(out Promise<int> gate);
        Assert.False(pending.IsFaulted);
        Assert.False(pending.IsCanceled);
        gate.SetResult(1);
        Assert.False(pending.IsFaulted);
        Assert.False(pending.IsCanceled);

        Job<int> faulted = ThrowSync();
        Assert.True(faulted.IsFaulted);
        Assert.False(faulted.IsCanceled);

        Job canceled = Job.FromCanceled(new CancellationToken(canceled: true));
        Assert.True(canceled.IsCanceled);
        Assert.False(canceled.IsFaulted);
        Assert.True(Job.FromException(new FormatException()).IsFaulted);
        Assert.True(Job.FromException(new OperationCanceledException()).IsCanceled); // as an async method that throws it

        ValueTask<int> asValueTask = ThrowSync().AsValueTask();
        Assert.True(asValueTask.IsFaulted);
    }

    [Fact]
    public void IsFaulted_ConsumedHandle_ThrowsInvalidOperation()
    {
        Job<int> job = AwaitThenAdd(Pending(out Promise<int> gate), 1);
        gate.SetException(new FormatException());
        Assert.True(job.IsFaulted);
        Assert.Throws<FormatException>(() => job.Wait());
        Assert.Throws<InvalidOperationException>(() => job.IsFaulted);
        Assert.Throws<InvalidOperationException>(() => job.IsCanceled);
    }
}
