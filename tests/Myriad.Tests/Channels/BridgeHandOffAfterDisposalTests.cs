using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// <see cref="HandOffAfterDisposalTests"/> for jobs that wait through the System.Threading.Channels
/// views (<see cref="Chan{T}.Reader"/>, <see cref="Chan{T}.Writer"/>): the waiting receive or send
/// belongs to the view, and the job awaits the view's <c>ValueTask</c>, not the receive. A job of a
/// disposed runtime is still never handed an item: it stays in the channel, or goes to the next waiter.
/// </summary>
public sealed class BridgeHandOffAfterDisposalTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(10);

    /// <summary>How each job waits; every body increments <c>ran</c> once past its wait.</summary>
    public static TheoryData<string, string> Waits()
    {
        var data = new TheoryData<string, string>();
        foreach (string kind in new[] { "multi", "current" })
        {
            foreach (string wait in new[] { "ReadAsync", "WaitToReadAsync", "ReadAllAsync" })
            {
                data.Add(kind, wait);
            }
        }

        return data;
    }

    private static Func<Chan<int>, Job> Body(string wait, StrongBox<int> ran) => wait switch
    {
        "ReadAsync" => async c => { await c.Reader.ReadAsync(); Interlocked.Increment(ref ran.Value); },
        "WaitToReadAsync" => async c => { await c.Reader.WaitToReadAsync(); Interlocked.Increment(ref ran.Value); },
        "ReadAllAsync" => async c => { await foreach (int _ in c.Reader.ReadAllAsync()) { Interlocked.Increment(ref ran.Value); } },
        "ReceiveAsTask" => async c => { await c.ReceiveAsync().AsTask(); Interlocked.Increment(ref ran.Value); },
        "WriteAsync" => async c => { await c.Writer.WriteAsync(7); Interlocked.Increment(ref ran.Value); },
        _ => throw new ArgumentException(wait),
    };

    /// <summary>A job of <paramref name="kind"/> suspended in <paramref name="body"/>, its runtime disposed.</summary>
    private static Job SpawnThenDispose(string kind, Chan<int> ch, Func<Chan<int>, Job> body)
    {
        if (kind == "multi")
        {
            // Dispose drains the queued spawn (it runs up to its suspension) and joins the worker.
            var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
            Job job = rt.Spawn((ch, body), static s => s.body(s.ch));
            rt.Dispose();
            return job;
        }

        var single = new CurrentThreadRuntime();
        Job spawned = single.Spawn((ch, body), static s => s.body(s.ch));
        single.RunUntilIdle(); // the job runs up to its wait
        single.Dispose();
        return spawned;
    }

    /// <summary>The handle itself, not AsTask(): a single-threaded runtime's task wraps the job's outcome.</summary>
    private static void AssertCanceled(Job job, StrongBox<int> ran)
    {
        Assert.True(SpinWait.SpinUntil(() => job.IsCompleted, Limit), "the orphaned job never completed");
        Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
        Assert.Equal(0, Volatile.Read(ref ran.Value));
    }

    [Theory]
    [MemberData(nameof(Waits))]
    public void TrySend_ReaderWaitOfDisposedRuntime_ReturnsFalseAndCancelsTheJob(string kind, string wait)
    {
        var ch = Chan.Unbuffered<int>();
        var ran = new StrongBox<int>();
        Job job = SpawnThenDispose(kind, ch, Body(wait, ran));

        Assert.False(ch.TrySend(42)); // the only receiver cannot run: nobody takes the item
        AssertCanceled(job, ran);
        Assert.False(ch.TryReceive(out _));
        Assert.Equal(0, ch.Reader.Count);
    }

    [Theory]
    [MemberData(nameof(Waits))]
    public void TrySend_ReaderWaitOfDisposedRuntimeThenLiveReceiver_HandsItemToTheLiveOne(string kind, string wait)
    {
        var ch = Chan.Unbuffered<int>();
        var ran = new StrongBox<int>();
        Job job = SpawnThenDispose(kind, ch, Body(wait, ran));
        Task<int> live = ch.ReceiveAsync().AsTask(); // queued behind the orphaned reader's receive

        Assert.True(ch.TrySend(42));
        Assert.True(live.Wait(Limit));
        Assert.Equal(42, live.Result);
        AssertCanceled(job, ran);
        Assert.Equal(0, ch.Reader.Count);
    }

    [Theory]
    [MemberData(nameof(Waits))]
    public void TrySend_ReaderWaitOfDisposedRuntimeOnBufferedChannel_BuffersTheItem(string kind, string wait)
    {
        var ch = Chan.Bounded<int>(2);
        var ran = new StrongBox<int>();
        Job job = SpawnThenDispose(kind, ch, Body(wait, ran));

        Assert.True(ch.TrySend(9));
        Assert.Equal(1, ch.Count);
        AssertCanceled(job, ran);
        Assert.True(ch.TryReceive(out int item));
        Assert.Equal(9, item);
    }

    [Theory]
    [InlineData("multi")]
    [InlineData("current")]
    public void TryReceive_WriterWriteAsyncOfDisposedRuntime_ReturnsFalseAndCancelsTheSend(string kind)
    {
        // As SendAsync: a send whose job can never go on is canceled as a whole, its item not taken.
        var ch = Chan.Unbuffered<int>();
        var ran = new StrongBox<int>();
        Job job = SpawnThenDispose(kind, ch, Body("WriteAsync", ran));

        Assert.False(ch.TryReceive(out _));
        AssertCanceled(job, ran);
        Assert.False(ch.TryReceive(out _));
    }

    [Theory]
    [InlineData("multi")]
    [InlineData("current")]
    public void TryReceive_WriterWriteAsyncOfDisposedRuntimeThenLiveSender_TakesTheLiveItem(string kind)
    {
        var ch = Chan.Unbuffered<int>();
        var ran = new StrongBox<int>();
        Job job = SpawnThenDispose(kind, ch, Body("WriteAsync", ran));
        Job live = ch.SendAsync(8); // queued behind the orphaned write

        Assert.True(ch.TryReceive(out int item));
        Assert.Equal(8, item);
        Assert.True(live.IsCompleted);
        AssertCanceled(job, ran);
    }

    // A hand-off that wins the race against the disposal: claimed while the runtime still took
    // resumes, its job's resume queued and then abandoned by the disposal. A current-thread runtime
    // that nobody drives holds the queued resume until Dispose abandons it: the item must come back.

    [Theory]
    [InlineData("ReadAsync", 0)]
    [InlineData("ReadAsync", 4)]
    [InlineData("WaitToReadAsync", 0)]
    [InlineData("WaitToReadAsync", 4)]
    [InlineData("ReadAllAsync", 0)]
    [InlineData("ReadAllAsync", 4)]
    public void Dispose_ResumeOfReaderWaitQueuedWithItem_GivesTheItemBack(string wait, int capacity)
    {
        Chan<int> ch = capacity == 0 ? Chan.Unbuffered<int>() : Chan.Bounded<int>(capacity);
        var ran = new StrongBox<int>();
        var rt = new CurrentThreadRuntime();
        Func<Chan<int>, Job> body = Body(wait, ran);
        Job job = rt.Spawn((ch, body), static s => s.body(s.ch));
        rt.RunUntilIdle();

        Assert.True(ch.TrySend(11)); // handed over; the job's resume waits in the undriven queue
        Assert.False(job.IsCompleted);
        rt.Dispose();

        Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
        Assert.Equal(0, ran.Value);
        Assert.True(ch.TryReceive(out int item), "the item handed to the abandoned job was lost");
        Assert.Equal(11, item);
        Assert.False(ch.TryReceive(out _)); // and not duplicated
        Assert.Equal(0, ch.Reader.Count);
    }

    [Fact]
    public void Dispose_ResumeOfReaderReadQueuedWithItem_ItemGoesToTheNextReceiver()
    {
        var ch = Chan.Unbuffered<int>();
        var ran = new StrongBox<int>();
        var rt = new CurrentThreadRuntime();
        Func<Chan<int>, Job> body = Body("ReadAsync", ran);
        Job job = rt.Spawn((ch, body), static s => s.body(s.ch));
        rt.RunUntilIdle();
        Assert.True(ch.TrySend(13));
        Task<int> live = ch.ReceiveAsync().AsTask(); // waits after the hand-off

        rt.Dispose();

        Assert.True(live.Wait(Limit));
        Assert.Equal(13, live.Result);
        Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
    }
}
