using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// <see cref="SelectBuilder.AsJob{T}"/> runs the winning handler where <see cref="SelectBuilder.AsJob()"/>
/// and a plain <c>await</c> run it: when the result is consumed, just before the await returns, so a
/// handler that throws throws there, never from the <c>AsJob&lt;T&gt;()</c> call. Each test runs the
/// same sequence through <c>AsJob()</c> first, as the reference.
/// </summary>
public sealed class SelectAsJobOfTTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(10);

    [Fact]
    public void AsJobOfT_CaseReadyHandlerThrows_ThrowsWhenConsumedNotFromTheCall()
    {
        var ch = Chan.Bounded<int>(1);
        ch.TrySend(1);
        Job<int> reference = Select.Receive(ch, static _ => throw new FormatException("handler")).AsJob();
        Assert.Throws<FormatException>(() => reference.GetAwaiter().GetResult());

        ch.TrySend(2);
        Job<SelectResult<int>> job = Select.Receive(ch, static _ => throw new FormatException("handler")).AsJob<int>();
        Assert.True(job.IsCompleted);
        Assert.Throws<FormatException>(() => job.GetAwaiter().GetResult());
        Assert.Equal(0, ch.Count); // the item was taken, as by the reference
    }

    [Fact]
    public void AsJobOfT_CaseReady_HandlerRunsWhenTheResultIsConsumed()
    {
        var ch = Chan.Bounded<int>(1);
        var seen = new StrongBox<int>();
        ch.TrySend(1);
        Job<int> reference = Select.Receive(ch, seen, static (s, v) => s.Value = v).AsJob();
        Assert.Equal(0, seen.Value);
        Assert.Equal(0, reference.GetAwaiter().GetResult());
        Assert.Equal(1, seen.Value);

        ch.TrySend(2);
        Job<SelectResult<int>> job = Select.Receive(ch, seen, static (s, v) => s.Value = v).AsJob<int>();
        Assert.Equal(1, seen.Value); // not yet
        SelectResult<int> result = job.GetAwaiter().GetResult();
        Assert.Equal(2, seen.Value);
        Assert.Equal(0, result.Index);
        Assert.True(result.Received);
        Assert.Equal(2, result.Value);
    }

    [Fact]
    public void AsJobOfT_CompletedWhileNobodyAwaits_HandlerRunsWhenTheResultIsConsumed()
    {
        // The select waits, then a send on this thread completes it: the handler must still wait for
        // the consumer (it runs on the awaiting job, not on whoever completed the select).
        var ch = Chan.Unbuffered<int>();
        var seen = new StrongBox<int>();
        Job<int> reference = Select.Receive(ch, seen, static (s, v) => s.Value = v).AsJob();
        Assert.True(ch.TrySend(1));
        Assert.Equal(0, seen.Value);
        Assert.Equal(0, reference.GetAwaiter().GetResult());
        Assert.Equal(1, seen.Value);

        Job<SelectResult<int>> job = Select.Receive(ch, seen, static (s, v) => s.Value = v).AsJob<int>();
        Assert.False(job.IsCompleted);
        Assert.True(ch.TrySend(2));
        Assert.True(job.IsCompleted);
        Assert.Equal(1, seen.Value); // not yet
        SelectResult<int> result = job.GetAwaiter().GetResult();
        Assert.Equal(2, seen.Value);
        Assert.Equal(2, result.Value);
    }

    [Fact]
    public void AsJobOfT_WaitingHandlerThrows_ThrowsAtTheAwait()
    {
        var ch = Chan.Unbuffered<int>();
        Job<SelectResult<int>> job = Select.Receive(ch, static _ => throw new FormatException("handler")).AsJob<int>();
        Assert.True(ch.TrySend(1));
        Assert.Throws<FormatException>(() => job.GetAwaiter().GetResult());
    }

    [Fact]
    public void AsJobOfT_AsTaskOfACompletedSelect_RunsTheHandlerOnConsumption()
    {
        var ch = Chan.Bounded<int>(1);
        var seen = new StrongBox<int>();
        ch.TrySend(3);
        Task<SelectResult<int>> task = Select.Receive(ch, seen, static (s, v) => s.Value = v).AsJob<int>().AsTask();
        Assert.True(task.Wait(Limit));
        Assert.Equal(3, task.Result.Value);
        Assert.Equal(3, seen.Value);
    }

    [Fact]
    public void AsJobOfT_CanceledWhileWaiting_ThrowsOperationCanceled()
    {
        var ch = Chan.Unbuffered<int>();
        using var cts = new CancellationTokenSource();
        Job<SelectResult<int>> job = Select.Receive(ch).WithCancellation(cts.Token).AsJob<int>();
        cts.Cancel();
        Assert.ThrowsAny<OperationCanceledException>(() => job.GetAwaiter().GetResult());
        Assert.False(ch.TrySend(1)); // the canceled select took nothing
    }

    [Fact]
    public void TrySend_AsJobOfTSelectOfDisposedRuntime_ReturnsFalseAndCancelsTheJob()
    {
        var ch = Chan.Unbuffered<int>();
        var ran = new StrongBox<int>();
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn((ch, ran), static async s =>
        {
            await Select.Receive(s.ch, s.ran, static (r, _) => Interlocked.Increment(ref r.Value)).AsJob<int>();
            Interlocked.Increment(ref s.ran.Value);
        }).AsTask();
        rt.Dispose();

        Assert.False(ch.TrySend(3)); // nobody that can run takes it
        HandOffAfterDisposalTests.AssertCanceled(job, ref ran.Value);
    }

    [Fact]
    public void Dispose_ResumeOfAsJobOfTSelectQueuedWithItem_GivesTheItemBack()
    {
        var ch = Chan.Unbuffered<int>();
        var ran = new StrongBox<int>();
        var rt = new CurrentThreadRuntime();
        Job job = rt.Spawn((ch, ran), static async s =>
        {
            await Select.Receive(s.ch, s.ran, static (r, _) => Interlocked.Increment(ref r.Value)).AsJob<int>();
            Interlocked.Increment(ref s.ran.Value);
        });
        rt.RunUntilIdle();

        Assert.True(ch.TrySend(12)); // handed over; the job's resume waits in the undriven queue
        rt.Dispose();

        Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
        Assert.Equal(0, ran.Value); // neither the handler nor the rest of the job ran
        Assert.True(ch.TryReceive(out int item), "the item handed to the abandoned select was lost");
        Assert.Equal(12, item);
    }

    private sealed class StrongBox<T>
    {
        public T Value = default!;
    }
}
