using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Coordination;
using Myriad.Scheduling;
using Xunit;
using ChanHandOff = Myriad.Tests.Channels.HandOffAfterDisposalTests;

namespace Myriad.Tests.Coordination;

/// <summary>
/// A job waiting for a lock or a permit whose runtime was disposed can never run again: the release
/// must skip it (it ends canceled) and hand the lock or permit to the next waiter, or keep it free.
/// </summary>
public sealed class HandOffAfterDisposalTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(10);

    [Fact]
    public void Release_MutexWaiterOfDisposedRuntime_LeavesTheMutexFree()
    {
        var mutex = new JobMutex();
        Assert.True(mutex.TryLock(out JobMutex.Releaser held));
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(mutex, async m => { using (await m.LockAsync()) { Interlocked.Increment(ref ran); } }).AsTask();
        rt.Dispose();

        held.Dispose();
        Assert.False(mutex.IsLocked);
        Assert.True(mutex.TryLock(out JobMutex.Releaser again));
        again.Dispose();
        ChanHandOff.AssertCanceled(job, ref ran);
    }

    [Fact]
    public void Release_MutexWaiterOfDisposedRuntimeThenLiveWaiter_HandsTheLockToTheLiveOne()
    {
        var mutex = new JobMutex();
        Assert.True(mutex.TryLock(out JobMutex.Releaser held));
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(mutex, async m => { using (await m.LockAsync()) { Interlocked.Increment(ref ran); } }).AsTask();
        rt.Dispose();
        Task<JobMutex.Releaser> live = mutex.LockAsync().AsTask();

        held.Dispose();
        Assert.True(live.Wait(Limit));
        Assert.True(mutex.IsLocked);
        live.Result.Dispose();
        Assert.False(mutex.IsLocked);
        ChanHandOff.AssertCanceled(job, ref ran);
    }

    [Fact]
    public void Release_SemaphoreWaiterOfDisposedRuntime_KeepsThePermit()
    {
        var semaphore = new JobSemaphore(0);
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(semaphore, async s => { using (await s.AcquireAsync()) { Interlocked.Increment(ref ran); } }).AsTask();
        rt.Dispose();

        semaphore.Release();
        Assert.Equal(1, semaphore.CurrentCount);
        ChanHandOff.AssertCanceled(job, ref ran);
    }

    [Fact]
    public void Release_SemaphoreWaitersOfDisposedAndLiveJobs_PermitGoesToTheLiveOne()
    {
        var semaphore = new JobSemaphore(0);
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(semaphore, async s => { using (await s.AcquireAsync()) { Interlocked.Increment(ref ran); } }).AsTask();
        rt.Dispose();
        Task<JobSemaphore.Releaser> live = semaphore.AcquireAsync().AsTask();

        semaphore.Release();
        Assert.True(live.Wait(Limit));
        Assert.Equal(0, semaphore.CurrentCount);
        live.Result.Dispose();
        Assert.Equal(1, semaphore.CurrentCount);
        ChanHandOff.AssertCanceled(job, ref ran);
    }

    [Fact]
    public void Done_WaitGroupWaiterOfDisposedRuntime_JobEndsCanceled()
    {
        var group = new WaitGroup();
        group.Add(1);
        int ran = 0;
        var rt = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        Task job = rt.Spawn(group, async g => { await g.WaitAsync(); Interlocked.Increment(ref ran); }).AsTask();
        rt.Dispose();

        group.Done();
        ChanHandOff.AssertCanceled(job, ref ran);
    }

    // The hand-off wins the race against the disposal (see the channel tests of the same name): the
    // lock or permit must come back when the disposal abandons the job's queued resume.

    [Fact]
    public void Dispose_ResumeOfMutexWaiterQueuedWithLock_ReleasesTheLock()
    {
        var mutex = new JobMutex();
        Assert.True(mutex.TryLock(out JobMutex.Releaser held));
        int ran = 0;
        var rt = new CurrentThreadRuntime();
        Job job = rt.Spawn(mutex, async m => { using (await m.LockAsync()) { Interlocked.Increment(ref ran); } });
        rt.RunUntilIdle();

        held.Dispose(); // handed to the job; its resume waits in the undriven queue
        Assert.True(mutex.IsLocked);
        rt.Dispose();

        Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
        Assert.Equal(0, ran);
        Assert.False(mutex.IsLocked, "the lock handed to the abandoned job stayed held");
    }

    [Fact]
    public void Dispose_ResumeOfSemaphoreWaiterQueuedWithPermit_ReturnsThePermit()
    {
        var semaphore = new JobSemaphore(0);
        int ran = 0;
        var rt = new CurrentThreadRuntime();
        Job job = rt.Spawn(semaphore, async s => { using (await s.AcquireAsync()) { Interlocked.Increment(ref ran); } });
        rt.RunUntilIdle();

        semaphore.Release();
        Assert.Equal(0, semaphore.CurrentCount);
        rt.Dispose();

        Assert.Throws<OperationCanceledException>(() => job.GetAwaiter().GetResult());
        Assert.Equal(0, ran);
        Assert.Equal(1, semaphore.CurrentCount);
    }
}
