using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// A job suspended on a channel whose runtime was disposed can never run again: a hand-off must skip
/// it (it ends canceled) and give the item to the next waiter, or keep it, never lose it.
/// </summary>
/// <remarks>
/// <c>Dispose</c> from the test thread drains the queued spawns (each runs up to its suspension) and
/// joins the workers, so every job below is suspended, with its continuation registered, before the
/// hand-off.
/// </remarks>
public sealed class HandOffAfterDisposalTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(10);

    /// <summary>Asserts that the job's task ends canceled (it never ran past its suspension).</summary>
    internal static void AssertCanceled(Task task, ref int ran)
    {
        Assert.True(Wait(task), "the orphaned job never completed");
        Assert.True(task.IsCanceled, $"expected Canceled, got {task.Status}: {task.Exception}");
        Assert.Equal(0, Volatile.Read(ref ran));
    }

    private static bool Wait(Task task)
    {
        try
        {
            return task.Wait(Limit);
        }
        catch (AggregateException)
        {
            return true;
        }
    }

    [Fact]
    public void TrySend_InlineReceiverOfDisposedRuntime_ReturnsFalseAndCancelsTheJob()
    {
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(ch, async c => { await c.ReceiveAsync(); Interlocked.Increment(ref ran); }).AsTask();
        rt.Dispose();

        Assert.False(ch.TrySend(1)); // the only receiver cannot run: nobody takes the item
        AssertCanceled(job, ref ran);
        Assert.False(ch.TryReceive(out _));
    }

    [Fact]
    public void TrySend_QueuedReceiverOfDisposedRuntime_ReturnsFalseAndCancelsTheJob()
    {
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(ch, async c => { await c.ReceiveOkAsync(); Interlocked.Increment(ref ran); }).AsTask();
        rt.Dispose();

        Assert.False(ch.TrySend(1));
        AssertCanceled(job, ref ran);
    }

    [Fact]
    public void TrySend_InlineReceiverOfDisposedRuntimeThenLiveReceiver_HandsItemToTheLiveOne()
    {
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(ch, async c => { await c.ReceiveAsync(); Interlocked.Increment(ref ran); }).AsTask();
        rt.Dispose();
        Task<int> live = ch.ReceiveAsync().AsTask(); // queued behind the orphaned inline receiver

        Assert.True(ch.TrySend(42));
        Assert.True(live.Wait(Limit));
        Assert.Equal(42, live.Result);
        AssertCanceled(job, ref ran);
    }

    [Fact]
    public void SendAsync_QueuedReceiverOfDisposedRuntime_WaitsForALiveReceiver()
    {
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(ch, async c => { await c.ReceiveOkAsync(); Interlocked.Increment(ref ran); }).AsTask();
        rt.Dispose();

        Job send = ch.SendAsync(5);
        Assert.False(send.IsCompleted); // the item waits with its sender
        Assert.True(ch.TryReceive(out int item));
        Assert.Equal(5, item);
        Assert.True(send.IsCompleted);
        AssertCanceled(job, ref ran);
    }

    [Fact]
    public void TrySend_BufferedReceiverOfDisposedRuntime_BuffersTheItem()
    {
        var ch = Chan.Bounded<int>(2);
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(ch, async c => { await c.ReceiveAsync(); Interlocked.Increment(ref ran); }).AsTask();
        rt.Dispose();

        Assert.True(ch.TrySend(9));
        Assert.Equal(1, ch.Count);
        AssertCanceled(job, ref ran);
        Assert.True(ch.TryReceive(out int item));
        Assert.Equal(9, item);
    }

    [Fact]
    public void TryReceive_SenderOfDisposedRuntime_ReturnsFalseAndCancelsTheSend()
    {
        // A send whose job can never go on is canceled as a whole: its item is not taken, as for a
        // send canceled by its token (never both).
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(ch, async c => { await c.SendAsync(1); Interlocked.Increment(ref ran); }).AsTask();
        rt.Dispose();

        Assert.False(ch.TryReceive(out _));
        AssertCanceled(job, ref ran);
    }

    [Fact]
    public void TrySend_SelectOfDisposedRuntime_ReturnsFalseAndCancelsTheJob()
    {
        var a = Chan.Unbuffered<int>();
        var b = Chan.Unbuffered<int>();
        int ran = 0;
        int received = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(async () =>
        {
            await Select.Receive(a, v => Interlocked.Exchange(ref received, v)).Receive(b, v => Interlocked.Exchange(ref received, v)).AsJob();
            Interlocked.Increment(ref ran);
        }).AsTask();
        rt.Dispose();

        Assert.False(a.TrySend(3));
        Assert.False(b.TrySend(4)); // the select's other case is gone too
        AssertCanceled(job, ref ran);
        Assert.Equal(0, received);
    }

    [Fact]
    public void TrySend_SelectOfDisposedRuntimeThenLiveReceiver_HandsItemToTheLiveOne()
    {
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(ch, async c => { await Select.Receive(c, _ => { }).AsJob(); Interlocked.Increment(ref ran); }).AsTask();
        rt.Dispose();
        Task<int> live = ch.ReceiveAsync().AsTask();

        Assert.True(ch.TrySend(8));
        Assert.True(live.Wait(Limit));
        Assert.Equal(8, live.Result);
        AssertCanceled(job, ref ran);
    }

    [Theory]
    [InlineData("current-thread")]
    [InlineData("deterministic")]
    public void TrySend_ReceiverOfDisposedSingleThreadRuntime_ReturnsFalseAndCancelsTheJob(string kind)
    {
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        var rt = kind == "deterministic" ? (SingleThreadRuntime)new DeterministicRuntime(seed: 1) : new CurrentThreadRuntime();
        Job job = rt.Spawn(ch, async c => { await c.ReceiveAsync(); Interlocked.Increment(ref ran); });
        rt.RunUntilIdle(); // the job runs up to its receive
        rt.Dispose();

        Assert.False(ch.TrySend(1));
        // The handle itself, not AsTask(): a single-threaded runtime's task wraps the job's outcome.
        Assert.True(SpinWait.SpinUntil(() => job.IsCompleted, Limit), "the orphaned job never completed");
        Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
        Assert.Equal(0, ran);
    }

    [Fact]
    public void Close_ReceiverOfDisposedRuntime_JobEndsCanceled()
    {
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(ch, async c => { await c.ReceiveAsync(); Interlocked.Increment(ref ran); }).AsTask();
        rt.Dispose();

        ch.Close();
        AssertCanceled(job, ref ran);
    }

    // A hand-off that wins the race against the disposal: claimed while the runtime still took
    // resumes, its job's resume queued and then abandoned by the disposal. A current-thread runtime
    // that nobody drives holds the queued resume until Dispose abandons it, so the window is
    // reproduced exactly: the item must come back to the channel.

    [Theory]
    [InlineData(0, false)]
    [InlineData(0, true)]
    [InlineData(4, false)]
    public void Dispose_ResumeOfReceiverQueuedWithItem_GivesTheItemBack(int capacity, bool receiveOk)
    {
        Chan<int> ch = capacity == 0 ? Chan.Unbuffered<int>() : Chan.Bounded<int>(capacity);
        int ran = 0;
        var rt = new CurrentThreadRuntime();
        Job job = receiveOk
            ? rt.Spawn(ch, async c => { await c.ReceiveOkAsync(); Interlocked.Increment(ref ran); })
            : rt.Spawn(ch, async c => { await c.ReceiveAsync(); Interlocked.Increment(ref ran); });
        rt.RunUntilIdle();

        Assert.True(ch.TrySend(11)); // handed over; the job's resume waits in the undriven queue
        Assert.False(job.IsCompleted);
        rt.Dispose();

        AssertCanceledAndItemBack(job, ran, ch, 11, "the item handed to the abandoned job was lost");
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    public void Close_AfterItemsWereGivenBack_ReceiversDrainThemBeforeTheClose(int capacity)
    {
        // Two sends succeeded (TrySend returned true), handed to two jobs that their runtime's
        // disposal then abandoned: the items came back, one or both parked with the senders for
        // want of room. The close failed them like sends still waiting and dropped the items, though
        // their sends had succeeded (a randomized probe lost 36 of 200 seeds this way).
        Chan<int> ch = capacity == 0 ? Chan.Unbuffered<int>() : Chan.Bounded<int>(capacity);
        var rt = new CurrentThreadRuntime();
        for (int i = 0; i < 2; i++)
        {
            rt.SpawnDetached(ch, static async c => { await c.ReceiveAsync(); });
        }

        rt.RunUntilIdle();
        Assert.True(ch.TrySend(1));
        Assert.True(ch.TrySend(2));
        rt.Dispose(); // the receivers never resume; their items come back
        ch.Close();

        Assert.False(ch.IsCompleted, "closed, but items are still to be received");
        var drained = new System.Collections.Generic.List<int>();
        while (ch.TryReceive(out int item))
        {
            drained.Add(item);
        }

        drained.Sort();
        Assert.Equal([1, 2], drained);
        Assert.True(ch.IsCompleted);
        Assert.False(ch.ReceiveOkAsync().Wait().Ok);
    }

    [Fact]
    public void Dispose_ResumeOfSelectQueuedWithItem_GivesTheItemBack()
    {
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        var rt = new CurrentThreadRuntime();
        Job job = rt.Spawn(ch, async c => { await Select.Receive(c, _ => Interlocked.Increment(ref ran)).AsJob(); Interlocked.Increment(ref ran); });
        rt.RunUntilIdle();

        Assert.True(ch.TrySend(12));
        rt.Dispose();

        Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
        Assert.Equal(0, ran); // neither the handler nor the rest of the job ran
        Assert.True(ch.TryReceive(out int item));
        Assert.Equal(12, item);
    }

    [Fact]
    public void Dispose_ResumeOfReceiverQueuedWithItem_ItemGoesToTheNextReceiver()
    {
        var ch = Chan.Unbuffered<int>();
        var rt = new CurrentThreadRuntime();
        Job job = rt.Spawn(ch, async c => { await c.ReceiveAsync(); });
        rt.RunUntilIdle();
        Assert.True(ch.TrySend(13));
        Task<int> live = ch.ReceiveAsync().AsTask(); // waits after the hand-off

        rt.Dispose();

        Assert.True(live.Wait(Limit));
        Assert.Equal(13, live.Result);
        Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
    }
    // The same hand-offs to a job that enumerates the channel with await foreach: the waiting receive
    // belongs to the ChanRange, and the job awaits the range, not the receive.

    [Fact]
    public void TrySend_RangeOfDisposedRuntime_ReturnsFalseAndCancelsTheJob()
    {
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(ch, async c => { await foreach (int _ in c.ReadAllAsync()) { Interlocked.Increment(ref ran); } }).AsTask();
        rt.Dispose();

        Assert.False(ch.TrySend(1)); // the only receiver cannot run: nobody takes the item
        AssertCanceled(job, ref ran);
        Assert.False(ch.TryReceive(out _));
    }

    [Fact]
    public void TrySend_RangeOfDisposedRuntimeThenLiveReceiver_HandsItemToTheLiveOne()
    {
        var ch = Chan.Bounded<int>(1);
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(ch, async c => { await foreach (int _ in c.ReadAllAsync()) { Interlocked.Increment(ref ran); } }).AsTask();
        rt.Dispose();
        Task<int> live = ch.ReceiveAsync().AsTask(); // queued behind the orphaned range's receive

        Assert.True(ch.TrySend(42));
        Assert.True(live.Wait(Limit));
        Assert.Equal(42, live.Result);
        AssertCanceled(job, ref ran);
        Assert.Equal(0, ch.Count);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(4)]
    public void Dispose_ResumeOfRangeQueuedWithItem_GivesTheItemBack(int capacity)
    {
        Chan<int> ch = capacity == 0 ? Chan.Unbuffered<int>() : Chan.Bounded<int>(capacity);
        int ran = 0;
        var rt = new CurrentThreadRuntime();
        Job job = rt.Spawn(ch, async c => { await foreach (int _ in c.ReadAllAsync()) { Interlocked.Increment(ref ran); } });
        rt.RunUntilIdle();

        Assert.True(ch.TrySend(14)); // handed to the range; the job's resume waits in the undriven queue
        Assert.False(job.IsCompleted);
        rt.Dispose();

        AssertCanceledAndItemBack(job, ran, ch, 14, "the item handed to the abandoned enumeration was lost");
    }

    [Fact]
    public void Dispose_RangeWaitStartedOffTheRuntime_GivesTheItemBack()
    {
        // MoveNextAsync called on a plain thread, its job awaited by a job of the runtime: the claim
        // cannot tell that the range's consumer will never run, so the item must come back when that
        // job is abandoned.
        var ch = Chan.Unbuffered<int>();
        int ran = 0;
        ChanRange<int> range = ch.ReadAllAsync().GetAsyncEnumerator();
        Job<bool> next = range.MoveNextAsync();
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(next, async n => { await n; Interlocked.Increment(ref ran); }).AsTask();
        rt.Dispose();

        Assert.True(ch.TrySend(15));
        AssertCanceled(job, ref ran);
        Assert.True(ch.TryReceive(out int item), "the item handed to the abandoned enumeration was lost");
        Assert.Equal(15, item);
        Assert.False(ch.TryReceive(out _));
    }

    /// <summary>The abandoned job ended canceled without running on, and the item it was handed is back in the channel, once.</summary>
    private static void AssertCanceledAndItemBack(Job job, int ran, Chan<int> ch, int expected, string lostMessage)
    {
        Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
        Assert.Equal(0, ran);
        Assert.True(ch.TryReceive(out int item), lostMessage);
        Assert.Equal(expected, item);
        Assert.False(ch.TryReceive(out _)); // and not duplicated
    }
}
