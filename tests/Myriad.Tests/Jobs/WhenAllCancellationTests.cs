using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Coordination;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// <c>Job.WhenAll</c> follows <c>Task.WhenAll</c>'s rule for cancellations: a cancellation is not a
/// failure, so a canceled job never hides a failed one behind an <see cref="OperationCanceledException"/>
/// (which callers commonly catch as a normal shutdown).
/// </summary>
public sealed class WhenAllCancellationTests
{
    private static readonly CancellationToken Canceled = new(canceled: true);

    private static async Job<int> Pass(Job<int> source) => await source;

    private static async Job Untyped(Job<int> source) => await source;

    [Fact]
    public void WhenAll_CanceledJobBeforeFailedJob_ThrowsTheFailure()
    {
        var canceled = new Promise<int>();
        var failed = new Promise<int>();
        Job all = Job.WhenAll(Untyped(canceled.Job), Untyped(failed.Job));
        canceled.SetException(new OperationCanceledException(Canceled));
        failed.SetException(new FormatException("real failure"));

        var e = Assert.Throws<FormatException>(() => all.Wait());
        Assert.Equal("real failure", e.Message);
        Assert.Same(e, Assert.Single(Job.GetAllFailures(e).InnerExceptions)); // as Task.WhenAll's Exception: the faults only
    }

    [Fact]
    public void WhenAllT_CanceledJobBeforeFailedJob_ThrowsTheFailure()
    {
        var first = new InvalidOperationException("first");
        var second = new FormatException("second");
        Job<int[]> all = Job.WhenAll(
            Job.FromCanceled<int>(Canceled),
            Job.FromException<int>(first),
            Job.FromResult(3),
            Job.FromCanceled<int>(Canceled),
            Job.FromException<int>(second));

        var e = Assert.Throws<InvalidOperationException>(() => all.Wait());
        Assert.Same(first, e);
        Assert.Equal([first, second], Job.GetAllFailures(e).InnerExceptions);
    }

    [Fact]
    public async Task WhenAll_CanceledAndFailed_AsTaskIsFaultedAsTaskWhenAllIs()
    {
        Task expected = Task.WhenAll(Task.FromCanceled(Canceled), Task.FromException(new FormatException()));
        Task actual = Job.WhenAll(Job.FromCanceled(Canceled), Job.FromException(new FormatException())).AsTask();
        await Assert.ThrowsAnyAsync<Exception>(() => expected);
        await Assert.ThrowsAnyAsync<Exception>(() => actual);

        Assert.Equal(expected.Status, actual.Status);
        Assert.Equal(TaskStatus.Faulted, actual.Status);
        Assert.IsType<FormatException>(actual.Exception!.InnerException);
    }

    [Fact]
    public void WhenAll_OnlyCancellations_ThrowsTheFirstCancellation()
    {
        var first = new OperationCanceledException("first", Canceled);
        var promise = new Promise<int>();
        Job all = Job.WhenAll(Job.CompletedJob, Job.FromException(first), Untyped(promise.Job));
        promise.SetException(new OperationCanceledException("second", Canceled));

        Assert.Same(first, Assert.Throws<OperationCanceledException>(() => all.Wait()));
    }

    [Fact]
    public void WhenAllT_CancellationNextToAcquiredLock_LockGivenBack()
    {
        var mutex = new JobMutex();
        Job<JobMutex.Releaser> locked = mutex.LockAsync();
        Job<JobMutex.Releaser> canceled = Job.FromCanceled<JobMutex.Releaser>(Canceled);

        Assert.Throws<OperationCanceledException>(() => Job.WhenAll(locked, canceled).Wait());
        Assert.True(mutex.LockAsync().IsCompletedSuccessfully, "the lock acquired by the job that succeeded was not given back");
    }

    [Fact]
    public void WhenAllT_AllSucceedAfterPromises_ResultsInOrder()
    {
        var a = new Promise<int>();
        var b = new Promise<int>();
        Job<int[]> all = Job.WhenAll(Pass(a.Job), Pass(b.Job));
        b.SetResult(2);
        a.SetResult(1);

        Assert.Equal([1, 2], all.Wait());
    }
}
