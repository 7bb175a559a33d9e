using System;
using System.Threading;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>The handle contract of <see cref="Promise{T}"/>: each handle single-use, the outcome readable again through a fresh one.</summary>
public sealed class PromiseTests
{
    private static async Job<int> AwaitThenAdd(Job<int> source, int add) => await source + add;

    [Fact]
    public void Job_ReadAgainAfterResultConsumed_FreshHandleReturnsTheSameResult()
    {
        var promise = new Promise<int>();
        promise.SetResult(5);
        Job<int> first = promise.Job;
        Assert.Equal(5, first.Wait());
        Assert.Throws<InvalidOperationException>(() => first.Wait()); // that handle is spent

        Job<int> second = promise.Job;
        Assert.True(second.IsCompleted);
        Assert.Equal(5, second.Wait());
        Assert.Equal(6, AwaitThenAdd(promise.Job, 1).Wait());
    }

    [Fact]
    public void Job_ReadAgainAfterFailureConsumed_FreshHandleRethrowsTheSameFailure()
    {
        var promise = new Promise<int>();
        var failure = new FormatException("the promise's failure");
        promise.SetException(failure);

        Assert.Same(failure, Assert.Throws<FormatException>(() => promise.Job.Wait()));
        Assert.Same(failure, Assert.Throws<FormatException>(() => promise.Job.Wait()));
    }

    [Fact]
    public void Job_ReadTwiceBeforeConsumption_SecondAwaiterThrowsAndFirstGetsTheResult()
    {
        var promise = new Promise<int>();
        Job<int> a = promise.Job;
        Job<int> b = promise.Job; // the same use as a, not a second one
        Job<int> first = AwaitThenAdd(a, 1);
        Job<int> second = AwaitThenAdd(b, 2);
        Assert.Contains("awaited twice", Assert.Throws<InvalidOperationException>(() => second.Wait()).Message);

        promise.SetResult(10);
        Assert.Equal(11, first.Wait());
        Assert.Throws<InvalidOperationException>(() => b.Wait()); // consumed through a
    }

    [Fact]
    public void SetCanceled_Pending_AwaiterGetsCancellationWithTheToken()
    {
        var promise = new Promise<int>();
        using var source = new CancellationTokenSource();
        source.Cancel();
        promise.SetCanceled(source.Token);

        Assert.True(promise.Job.IsCanceled);
        OperationCanceledException canceled = Assert.ThrowsAny<OperationCanceledException>(() => promise.Job.Wait());
        Assert.Equal(source.Token, canceled.CancellationToken);
        Assert.Contains("already", Assert.Throws<InvalidOperationException>(() => promise.SetCanceled()).Message);
    }
}
