using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Coordination;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Interop;

/// <summary>
/// Plain <c>async Task</c> code that waits on a channel or a coordination primitive, woken by a plain
/// thread's send, close or release, resumes outside that call (on the thread pool), as with
/// <c>System.Threading.Channels</c> and <c>SemaphoreSlim</c>. It used to resume inline, inside the
/// waker's <c>TrySend</c> or <c>Release</c>, so a consumer that then waited for its producer waited on
/// its own thread and hung.
/// </summary>
public sealed class ForeignWaiterResumeTests
{
    [Fact]
    public void ReceiveAsync_PlainSenderThread_ReaderResumesOutsideTheSend()
    {
        var chan = Chan.Unbounded<int>();
        AssertResumesOutsideTheCall(async () => await chan.ReceiveAsync(), () => Assert.True(chan.TrySend(1)));
    }

    [Fact]
    public void SendAsync_UnbufferedPlainReceiverThread_SenderResumesOutsideTheReceive()
    {
        var chan = Chan.Unbuffered<int>();
        AssertResumesOutsideTheCall(async () => await chan.SendAsync(1), () => Assert.True(chan.TryReceive(out _)));
    }

    [Fact]
    public void ReaderReadAsync_PlainWriterThread_ReaderResumesOutsideTryWrite()
    {
        var chan = Chan.Unbounded<int>();
        AssertResumesOutsideTheCall(async () => await chan.Reader.ReadAsync(), () => Assert.True(chan.Writer.TryWrite(1)));
    }

    [Fact]
    public void ReaderWaitToReadAsync_PlainThreadCompletesTheWriter_ReaderResumesOutsideComplete()
    {
        var chan = Chan.Bounded<int>(4);
        AssertResumesOutsideTheCall(async () => Assert.False(await chan.Reader.WaitToReadAsync()), () => chan.Writer.Complete());
    }

    [Fact]
    public void ReadAllAsync_PlainSenderThread_EnumeratorResumesOutsideTheSend()
    {
        var chan = Chan.Unbounded<int>();
        AssertResumesOutsideTheCall(
            async () =>
            {
                await foreach (int item in chan.ReadAllAsync())
                {
                    Assert.Equal(7, item);
                    break;
                }
            },
            () => Assert.True(chan.TrySend(7)));
    }

    [Fact]
    public void Select_PlainSenderThread_SelectResumesOutsideTheSend()
    {
        var chan = Chan.Unbounded<int>();
        AssertResumesOutsideTheCall(async () => await Select.Receive(chan), () => Assert.True(chan.TrySend(3)));
    }

    [Fact]
    public void LockAsync_PlainThreadReleases_WaiterResumesOutsideTheRelease()
    {
        var mutex = new JobMutex();
        JobMutex.Releaser held = mutex.LockAsync().Wait();
        AssertResumesOutsideTheCall(
            async () =>
            {
                using JobMutex.Releaser mine = await mutex.LockAsync();
            },
            () => held.Dispose());
    }

    [Fact]
    public void SemaphoreWaitAsync_PlainThreadReleases_WaiterResumesOutsideTheRelease()
    {
        var semaphore = new JobSemaphore(0);
        AssertResumesOutsideTheCall(async () => await semaphore.WaitAsync(), () => semaphore.Release());
    }

    [Fact]
    public void WaitGroupWaitAsync_PlainThreadCallsDone_WaiterResumesOutsideDone()
    {
        var group = new WaitGroup();
        group.Add();
        AssertResumesOutsideTheCall(async () => await group.WaitAsync(), () => group.Done());
    }

    [Fact]
    public void ReceiveAsync_JobOfNoRuntimeAndAPlainSenderThread_JobResumesOutsideTheSend()
    {
        // An async Job method called directly on a plain thread belongs to no runtime: it is not a
        // runtime's job, and a plain sender must not run it inside TrySend either.
        var chan = Chan.Unbounded<int>();
        AssertJobResumesOutsideTheCall(async () => Assert.Equal(5, await chan.ReceiveAsync()), () => Assert.True(chan.TrySend(5)));
    }

    // A job of no runtime that waits through a ValueTask registers its own resume on the cell (so a
    // job of a runtime goes home at once): that resume, too, must not run inside a plain waker's call.

    [Fact]
    public void ReaderReadAsync_JobOfNoRuntimeAndAPlainWriterThread_JobResumesOutsideTryWrite()
    {
        var chan = Chan.Unbuffered<int>();
        AssertJobResumesOutsideTheCall(async () => await chan.Reader.ReadAsync(), () => Assert.True(chan.Writer.TryWrite(1)));
    }

    [Fact]
    public void ReaderWaitToReadAsync_JobOfNoRuntimeAndAPlainThreadCloses_JobResumesOutsideClose()
    {
        var chan = Chan.Bounded<int>(4);
        AssertJobResumesOutsideTheCall(async () => Assert.False(await chan.Reader.WaitToReadAsync()), () => chan.Close());
    }

    [Fact]
    public void WriterWriteAsync_JobOfNoRuntimeAndAPlainReceiverThread_JobResumesOutsideTryReceive()
    {
        var chan = Chan.Unbuffered<int>();
        AssertJobResumesOutsideTheCall(async () => await chan.Writer.WriteAsync(1), () => Assert.True(chan.TryReceive(out _)));
    }

    [Fact]
    public void ReceiveOkAsyncAsValueTask_JobOfNoRuntimeAndAPlainSenderThread_JobResumesOutsideTheSend()
    {
        var chan = Chan.Unbounded<int>();
        AssertJobResumesOutsideTheCall(async () => Assert.True((await chan.ReceiveOkAsync().AsValueTask()).Ok), () => Assert.True(chan.TrySend(1)));
    }

    [Fact]
    public void WaitGroupWaitAsyncAsValueTask_JobOfNoRuntimeAndAPlainThreadCallsDone_JobResumesOutsideDone()
    {
        var group = new WaitGroup();
        group.Add();
        AssertJobResumesOutsideTheCall(async () => await group.WaitAsync().AsValueTask(), () => group.Done());
    }

    [Fact]
    public void LockAsyncAsValueTask_JobOfNoRuntimeAndAPlainThreadReleases_JobResumesOutsideTheRelease()
    {
        var mutex = new JobMutex();
        JobMutex.Releaser held = mutex.LockAsync().Wait();
        AssertJobResumesOutsideTheCall(
            async () =>
            {
                using JobMutex.Releaser mine = await mutex.LockAsync().AsValueTask();
            },
            () => held.Dispose());
    }

    /// <summary>
    /// As <see cref="AssertResumesOutsideTheCall"/>, for an <c>async Job</c> method called directly on
    /// a plain thread (a job of no runtime) that runs <paramref name="wait"/>.
    /// </summary>
    private static void AssertJobResumesOutsideTheCall(Func<Job> wait, Action wake)
    {
        using var callReturned = new ManualResetEventSlim();
        int wakerThread = 0;
        Job<(bool SawTheCallReturn, int Thread)> consumer = TestHelpers.OnThread(() => WaitThenLook(wait, callReturned));
        TestThread thread = TestThread.Start(
            () =>
            {
                wakerThread = Environment.CurrentManagedThreadId;
                wake();
                callReturned.Set();
            },
            "waker");
        Assert.True(thread.Join(Bounded.Limit));
        Task<(bool SawTheCallReturn, int Thread)> done = consumer.AsTask();
        Assert.True(done.Wait(Bounded.Limit));
        (bool sawTheCallReturn, int resumedOn) = done.Result;
        Assert.True(sawTheCallReturn, "the job ran inside the waker's call");
        Assert.NotEqual(wakerThread, resumedOn);

        static async Job<(bool, int)> WaitThenLook(Func<Job> wait, ManualResetEventSlim callReturned)
        {
            await wait();
            return (callReturned.Wait(TimeSpan.FromSeconds(2)), Environment.CurrentManagedThreadId);
        }
    }

    [Fact]
    public void LockAsyncWithWaitAsync_PlainThreadReleases_WaiterResumesOutsideTheRelease()
    {
        // The race's promise is completed by its observer inside the release: it resumes plain code
        // on the thread pool too.
        var mutex = new JobMutex();
        JobMutex.Releaser held = mutex.LockAsync().Wait();
        AssertResumesOutsideTheCall(
            async () =>
            {
                using JobMutex.Releaser mine = await mutex.LockAsync().WaitAsync(TimeSpan.FromSeconds(30));
            },
            () => held.Dispose());
    }

    [Fact]
    public void WhenAnyOverAReceive_PlainSenderThread_WaiterResumesOutsideTheSend()
    {
        var chan = Chan.Unbounded<int>();
        var never = new Promise<int>();
        AssertResumesOutsideTheCall(async () => await Job.WhenAny(chan.ReceiveAsync(), never.Job), () => Assert.True(chan.TrySend(1)));
    }

    [Fact]
    public void SemaphoreWaitAsyncWithAToken_PlainThreadReleases_WaiterResumesOutsideTheRelease()
    {
        var semaphore = new JobSemaphore(0);
        using var cts = new CancellationTokenSource();
        AssertResumesOutsideTheCall(async () => await semaphore.WaitAsync().WaitAsync(cts.Token), () => semaphore.Release());
    }

    [Fact]
    public void Promise_PlainThreadSetsTheResult_WaiterStillResumesInline()
    {
        // A promise is a TaskCompletionSource's counterpart and keeps its default: the awaiting code
        // runs inside SetResult on a thread of no runtime (README, "where code runs").
        var promise = new Promise<int>();
        int setter = 0, resumedOn = 0;
        Task waiter = StartWithoutContext(Wait);
        TestThread thread = TestThread.Start(
            () =>
            {
                setter = Environment.CurrentManagedThreadId;
                promise.SetResult(1);
            },
            "setter");
        Assert.True(thread.Join(Bounded.Limit));
        Assert.True(waiter.Wait(Bounded.Limit));
        Assert.Equal(setter, resumedOn);

        async Task Wait()
        {
            await promise.Job;
            resumedOn = Environment.CurrentManagedThreadId;
        }
    }

    /// <summary>
    /// Starts plain async code as code without a SynchronizationContext does (xunit's test threads
    /// have one, and an await there would post its continuation to it whatever the waker did).
    /// </summary>
    private static Task StartWithoutContext(Func<Task> start)
    {
        SynchronizationContext? previous = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(null);
        try
        {
            return start();
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }
    }

    /// <summary>
    /// Starts <paramref name="wait"/> as plain async code (it runs here up to its first suspension),
    /// then runs <paramref name="wake"/> on a plain thread and only after it returned sets an event:
    /// code resumed inside <paramref name="wake"/> would wait for that event in vain.
    /// </summary>
    private static void AssertResumesOutsideTheCall(Func<Task> wait, Action wake)
    {
        using var callReturned = new ManualResetEventSlim();
        int wakerThread = 0;
        var resumed = new TaskCompletionSource<(bool SawTheCallReturn, int Thread)>(TaskCreationOptions.RunContinuationsAsynchronously);
        Task waiter = StartWithoutContext(WaitThenLook);
        Assert.False(waiter.IsCompleted, "the wait completed before anything woke it");

        TestThread thread = TestThread.Start(
            () =>
            {
                wakerThread = Environment.CurrentManagedThreadId;
                wake();
                callReturned.Set();
            },
            "waker");
        Assert.True(thread.Join(Bounded.Limit));
        Assert.True(resumed.Task.Wait(Bounded.Limit));
        (bool sawTheCallReturn, int resumedOn) = resumed.Task.Result;
        Assert.True(sawTheCallReturn, "the waiting code ran inside the waker's call");
        Assert.NotEqual(wakerThread, resumedOn);
        Assert.True(waiter.Wait(Bounded.Limit));

        async Task WaitThenLook()
        {
            await wait();
            resumed.SetResult((callReturned.Wait(TimeSpan.FromSeconds(2)), Environment.CurrentManagedThreadId));
        }
    }
}
