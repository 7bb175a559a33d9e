using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary><see cref="Job.WhenAll(Job[])"/> and its typed overload: what they read from the caller's array.</summary>
public sealed class CombinatorTests
{
    private static async Job Untyped(Job<int> source) => await source;

    private static async Job<int> Pass(Job<int> source) => await source;

    [Fact]
    public void WhenAll_CallerReusesArray_StillAwaitsTheOriginalJobs()
    {
        var first = new Promise<int>();
        var second = new Promise<int>();
        Job[] batch = [Untyped(first.Job), Untyped(second.Job)];
        Job all = Job.WhenAll(batch);
        batch[1] = Job.CompletedJob; // the caller reuses its buffer for the next batch

        first.SetResult(1);
        Assert.False(all.IsCompleted, "WhenAll completed although the second job it was given is still pending");
        second.SetResult(2);
        Sync.Result(all);
    }

    [Fact]
    public void WhenAllT_CallerReusesArray_ResultsComeFromTheOriginalJobs()
    {
        var first = new Promise<int>();
        var second = new Promise<int>();
        Job<int>[] batch = [Pass(first.Job), Pass(second.Job)];
        Job<int[]> all = Job.WhenAll(batch);
        batch[1] = Job.FromResult(99);

        first.SetResult(1);
        Assert.False(all.IsCompleted, "WhenAll completed although the second job it was given is still pending");
        second.SetResult(2);
        Assert.Equal([1, 2], Sync.Result(all));
    }
}
