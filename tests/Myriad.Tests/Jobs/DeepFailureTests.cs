using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using Myriad.Internal;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// A failure crosses an async recursion or an await chain of any depth in linear time, reaching
/// the awaiter with the original exception and its origin in the stack trace; shallow failures keep
/// every level in the trace. The deep tests carry no timing assertion: the depth alone makes
/// quadratic propagation run far past the test helper's timeout.
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Slow")]
public class DeepFailureTests
{
    private const int Depth = 200_000;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowAtOrigin() => throw new InvalidDataException("origin");

    /// <summary>Fails at the bottom, after a real suspension (pending boxes all the way up).</summary>
    private static async Job<int> RecurseThenFail(int n)
    {
        if (n == 0)
        {
            await Job.Delay(1);
            ThrowAtOrigin();
        }

        return await RecurseThenFail(n - 1) + 1;
    }

    /// <summary>Fails at the bottom synchronously (faulted pooled boxes, awaited without suspending).</summary>
    private static async Job<int> RecurseThenFailSynchronously(int n)
    {
        if (n == 0)
        {
            ThrowAtOrigin();
        }

        return await RecurseThenFailSynchronously(n - 1) + 1;
    }

    /// <summary>Every level goes through WhenAll, which catches the failure and throws it again later.</summary>
    private static async Job RecurseThroughWhenAll(int n)
    {
        if (n == 0)
        {
            await Job.Delay(1);
            ThrowAtOrigin();
        }

        await Job.WhenAll(RecurseThroughWhenAll(n - 1), Job.CompletedJob);
    }

    private static async Job<int> Link(Job<int> previous) => await previous + 1;

    private static int CountOccurrences(string text, string part)
    {
        int count = 0;
        for (int at = text.IndexOf(part, StringComparison.Ordinal); at >= 0; at = text.IndexOf(part, at + part.Length, StringComparison.Ordinal))
        {
            count++;
        }

        return count;
    }

    /// <summary>The trace has the origin, then the traced levels in full, and stops growing there.</summary>
    private static void AssertDeepTrace(Exception e, string levelFrame)
    {
        string trace = e.StackTrace ?? "";
        Assert.Contains(nameof(ThrowAtOrigin), trace, StringComparison.Ordinal);
        int levels = CountOccurrences(trace, levelFrame);
        Assert.InRange(levels, MyriadDefaults.FailureTraceLevels, MyriadDefaults.FailureTraceLevels + 2);
    }

    [Fact]
    public void Await_FailureThreeLevelsDown_TraceShowsTheMethodsNotTheAwaitPlumbing()
    {
        // As a Task's: the awaiter's GetResult frames are hidden, the async methods are not.
        var e = Assert.Throws<InvalidDataException>(() => RecurseThenFail(3).Wait());
        string trace = e.StackTrace ?? "";
        Assert.Contains(nameof(ThrowAtOrigin), trace, StringComparison.Ordinal);
        Assert.Contains(nameof(RecurseThenFail), trace, StringComparison.Ordinal);
        Assert.DoesNotContain("GetResult", trace, StringComparison.Ordinal);
    }

    [Fact]
    public void Recursion_FailureTwoHundredThousandDeep_ReachesAwaiterWithOriginInTrace()
    {
        var e = TestHelpers.OnThread(() => Assert.Throws<InvalidDataException>(() => RecurseThenFail(Depth).Wait()));
        Assert.Equal("origin", e.Message);
        AssertDeepTrace(e, "." + nameof(RecurseThenFail) + "(");
    }

    [Fact]
    public void Recursion_SynchronousFailureTwoHundredThousandDeep_ReachesAwaiterWithOriginInTrace()
    {
        var e = TestHelpers.OnThread(() => Assert.Throws<InvalidDataException>(() => RecurseThenFailSynchronously(Depth).Wait()));
        AssertDeepTrace(e, "." + nameof(RecurseThenFailSynchronously) + "(");
    }

    [Fact]
    public void Recursion_FailureTwoHundredThousandDeepOnMultiThreadWorkers_ReachesAwaiter()
    {
        using var runtime = new Myriad.Scheduling.MultiThreadRuntime(new Myriad.Scheduling.RuntimeOptions { WorkerCount = 2, ThreadStackSize = 1 << 20 });
        var e = TestHelpers.OnThread(() => Assert.Throws<InvalidDataException>(
            () => runtime.Run(runtime, static async rt => await rt.Spawn(static () => RecurseThenFail(Depth)))));
        Assert.Contains(nameof(ThrowAtOrigin), e.StackTrace, StringComparison.Ordinal);
    }

    [Fact]
    public void WhenAll_FailureThroughHundredThousandNestedLevels_ReachesAwaiterWithOriginInTrace()
    {
        var e = TestHelpers.OnThread(() => Assert.Throws<InvalidDataException>(() => RecurseThroughWhenAll(Depth / 2).Wait()));
        Assert.Contains(nameof(ThrowAtOrigin), e.StackTrace, StringComparison.Ordinal);
        Assert.InRange(CountOccurrences(e.StackTrace!, "." + nameof(RecurseThroughWhenAll) + "("), 1, MyriadDefaults.FailureTraceLevels + 2);
    }

    [Fact]
    public void Chain_FailureThroughTwoHundredThousandLinks_ReachesTailWithOriginalException()
    {
        Exception origin;
        try
        {
            ThrowAtOrigin();
            throw new UnreachableException();
        }
        catch (InvalidDataException thrown)
        {
            origin = thrown;
        }

        var caught = TestHelpers.OnThread(() =>
        {
            var head = new Promise<int>();
            Job<int> tail = head.Job;
            for (int i = 0; i < Depth; i++)
            {
                tail = Link(tail);
            }

            head.SetException(origin);
            return Assert.Throws<InvalidDataException>(() => tail.Wait());
        });
        Assert.Same(origin, caught);
        AssertDeepTrace(caught, "." + nameof(Link) + "(");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Recursion_FailureThreeDeep_TraceShowsEveryLevel(bool synchronous)
    {
        // A deep failure first, on the same thread: its record must not shorten the next failure's trace.
        Assert.Throws<InvalidDataException>(() => RecurseThenFail(MyriadDefaults.FailureTraceLevels * 2).Wait());

        var e = synchronous
            ? Assert.Throws<InvalidDataException>(() => RecurseThenFailSynchronously(3).Wait())
            : Assert.Throws<InvalidDataException>(() => RecurseThenFail(3).Wait());
        string trace = e.StackTrace ?? "";
        string frame = "." + (synchronous ? nameof(RecurseThenFailSynchronously) : nameof(RecurseThenFail)) + "(";
        Assert.Contains(nameof(ThrowAtOrigin), trace, StringComparison.Ordinal);
        Assert.Equal(4, CountOccurrences(trace, frame)); // levels 3, 2, 1 and the failing 0
    }

    [Fact]
    public void Recursion_FailureJustBeyondTracedLevels_TraceKeepsTracedLevels()
    {
        var e = Assert.Throws<InvalidDataException>(() => RecurseThenFail(MyriadDefaults.FailureTraceLevels + 10).Wait());
        AssertDeepTrace(e, "." + nameof(RecurseThenFail) + "(");
    }
}
