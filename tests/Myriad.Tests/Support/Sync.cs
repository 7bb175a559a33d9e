using Xunit;

namespace Myriad.Tests.Support;

/// <summary>Assertions on jobs that must already have completed (tests that drive everything synchronously).</summary>
internal static class Sync
{
    internal static T Result<T>(Job<T> job)
    {
        Assert.True(job.IsCompleted, "the job should have completed synchronously");
        return job.GetAwaiter().GetResult();
    }

    internal static void Result(Job job)
    {
        Assert.True(job.IsCompleted, "the job should have completed synchronously");
        job.GetAwaiter().GetResult();
    }
}
