using System;
using System.Threading.Tasks;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// Synchronous waits (<c>Wait()</c>, <c>GetAwaiter().GetResult()</c>) on threads of no runtime,
/// nested deeper than the trampoline runs inline: what the trampoline deferred to the thread's own
/// queue is what the wait is waiting for.
/// </summary>
public class BlockingWaiterTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    // Sync-over-async recursion: each level blocks on the next. Past the inline depth the next
    // level's body is deferred to this thread, which then blocks on it.
    private static async Job<int> WaitingRecursion(int n) => n == 0 ? 0 : WaitingRecursion(n - 1).Wait() + 1;

    private static async Job<int> ResultRecursion(int n) => n == 0 ? 0 : ResultRecursion(n - 1).GetAwaiter().GetResult() + 1;

    private static async Job<int> AwaitPromise(Promise<int> promise) => await promise.Job + 1;

    // Reaches depth n through waits nested in job bodies, then completes a promise that a job
    // awaits (its resume is deferred at that depth) and waits for that job.
    private static async Job<int> CompleteThenWait(int n)
    {
        if (n > 0)
        {
            return CompleteThenWait(n - 1).Wait();
        }

        var promise = new Promise<int>();
        Job<int> awaiting = AwaitPromise(promise);
        promise.SetResult(41);
        return awaiting.Wait();
    }

    [Theory]
    [InlineData(47)]
    [InlineData(48)]
    [InlineData(100)]
    [InlineData(1000)]
    public void Wait_InSyncRecursionPastTheInlineDepth_OnAPlainThread_Returns(int depth)
    {
        // Each level of sync-over-async recursion blocks in a frame of its own (nothing can trampoline
        // a blocked wait): about 1 KB of stack a level with tier-0 or instrumented code. 1,000 levels
        // on a 1 MiB stack overflowed now and then in a full run (the test host crashed), depending
        // on which tier the JIT had reached for these methods; what is tested is the deferral past the
        // inline depth, not the stack's size, so the thread gets room to spare.
        Assert.Equal(depth, TestHelpers.OnThread(() => WaitingRecursion(depth).Wait(), stackSize: DeepStack, timeout: Timeout));
        Assert.Equal(depth, TestHelpers.OnThread(() => ResultRecursion(depth).GetAwaiter().GetResult(), stackSize: DeepStack, timeout: Timeout));
    }

    private const int DeepStack = 16 << 20;

    [Fact]
    public void Wait_InSyncRecursionPastTheInlineDepth_OnAPoolThread_Returns()
    {
        Task<int> task = Task.Run(() => WaitingRecursion(200).Wait());
        Assert.True(task.Wait(Timeout), "the wait never returned");
        Assert.Equal(200, task.Result);
    }

    [Theory]
    [InlineData(10)]
    [InlineData(46)]
    [InlineData(47)]
    [InlineData(60)]
    public void Wait_ForAResumeDeferredByThisThread_Returns(int depth)
    {
        Assert.Equal(42, TestHelpers.OnThread(() => CompleteThenWait(depth).Wait(), timeout: Timeout));
    }
}
