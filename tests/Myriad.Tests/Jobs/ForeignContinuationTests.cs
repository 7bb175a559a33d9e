using System;
using System.Collections.Concurrent;
using System.Threading;
using Myriad.Internal;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// Continuations that are not Myriad's own run inline inside a completion; when one throws, its
/// exception goes to <see cref="ThrowHelper.ContinuationFailed"/> instead of unwinding through the
/// completing job (which would skip the trampoline's depth bookkeeping and the builder's context
/// restore). The hook is process-wide, hence the serialized collection.
/// </summary>
[Collection(HeavyCollection.Name)]
public class ForeignContinuationTests
{
    private static readonly AsyncLocal<string?> s_local = new();

    private static async Job<int> AwaitThenAdd(Job<int> source) => await source + 1;

    private static async Job<int> CompleteInside(Promise<int> promise)
    {
        s_local.Value = "inside";
        promise.SetResult(1); // resumes AwaitThenAdd inline, which completes and runs the raw continuation
        return 5;
    }

    [Fact]
    public void RawActionContinuation_Throws_GoesToHookAndCallerStateIsIntact()
    {
        AssertThrowingContinuationIsContained(static job => job.GetAwaiter().UnsafeOnCompleted(static () => throw new FormatException("raw continuation")));
    }

    [Fact]
    public void ValueTaskConsumerCallback_Throws_GoesToHookAndCallerStateIsIntact()
    {
        AssertThrowingContinuationIsContained(static job => job.AsValueTask().GetAwaiter().OnCompleted(static () => throw new FormatException("value task callback")));
    }

    private static void AssertThrowingContinuationIsContained(Action<Job<int>> registerThrowing)
    {
        var seen = new ConcurrentQueue<Exception>();
        Action<Exception> original = ThrowHelper.ContinuationFailed;
        ThrowHelper.ContinuationFailed = seen.Enqueue;
        try
        {
            TestHelpers.OnThread(() =>
            {
                var promise = new Promise<int>();
                registerThrowing(AwaitThenAdd(promise.Job));
                Job<int> outer = CompleteInside(promise);

                Assert.True(outer.IsCompleted);
                Assert.Equal(5, outer.Wait());
                Assert.Null(s_local.Value);                  // the builder restored the caller's context
                Assert.Equal(0, PerThread.Current.Depth);    // and the trampoline's depth
                Assert.Equal(3, AwaitThenAdd(Job.FromResult(2)).Wait()); // and the thread still works
                return 0;
            });
            Exception failure = Assert.Single(seen);
            Assert.IsType<FormatException>(failure);
        }
        finally
        {
            ThrowHelper.ContinuationFailed = original;
        }
    }
}
