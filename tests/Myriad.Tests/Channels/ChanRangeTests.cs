using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>The enumerator behind <see cref="Chan{T}.ReadAllAsync"/>: its pattern, its interface path and its tokens.</summary>
public sealed class ChanRangeTests
{
    [Fact]
    public void MoveNextAsync_ItemBuffered_CompletesSynchronously()
    {
        Chan<int> ch = Chan.Bounded<int>(4);
        ch.TrySend(7);
        ChanRange<int> range = ch.ReadAllAsync();
        Job<bool> next = range.MoveNextAsync();
        Assert.True(next.IsCompleted);
        Assert.True(next.Wait());
        Assert.Equal(7, range.Current);
    }

    [Fact]
    public void MoveNextAsync_EmptyThenSend_CompletesWithTheItem()
    {
        using var runtime = new CurrentThreadRuntime();
        Chan<int> ch = Chan.Unbounded<int>();
        int got = Bounded.Run(runtime, async () =>
        {
            ChanRange<int> range = ch.ReadAllAsync();
            Job<bool> next = range.MoveNextAsync();
            Assert.False(next.IsCompleted);
            ch.TrySend(42);
            Assert.True(await next);
            return range.Current;
        });
        Assert.Equal(42, got);
    }

    [Fact]
    public void MoveNextAsync_ClosedAndDrained_ReturnsFalse()
    {
        Chan<int> ch = Chan.Bounded<int>(2);
        ch.TrySend(1);
        ch.Close();
        ChanRange<int> range = ch.ReadAllAsync();
        Assert.True(range.MoveNextAsync().Wait());
        Assert.False(range.MoveNextAsync().Wait());
    }

    [Fact]
    public async Task MoveNextAsync_AfterDisposeAsync_ReturnsFalseAndTakesNothing()
    {
        Chan<int> ch = Chan.Bounded<int>(4);
        ch.TrySend(1);
        ch.TrySend(2);
        ChanRange<int> range = ch.ReadAllAsync();
        Assert.True(range.MoveNextAsync().Wait());
        await range.DisposeAsync();

        Assert.False(range.MoveNextAsync().Wait());
        Assert.False(await ((IAsyncEnumerator<int>)range).MoveNextAsync());
        Assert.True(ch.TryReceive(out int left)); // the item a disposed enumeration would have taken
        Assert.Equal(2, left);
    }

    [Fact]
    public async Task ConfigureAwait_False_CompilesAndEnumeratesEveryItem()
    {
        Chan<int> ch = Chan.Bounded<int>(4);
        ch.TrySend(1);
        ch.TrySend(2);
        ch.Close();
        int sum = 0;
        await foreach (int item in ch.ReadAllAsync().ConfigureAwait(false))
        {
            sum += item;
        }

        Assert.Equal(3, sum);
    }

    [Fact]
    public void GetAsyncEnumerator_SecondCall_EnumeratesIndependently()
    {
        Chan<int> ch = Chan.Bounded<int>(4);
        ch.TrySend(1);
        ch.TrySend(2);
        ch.Close();
        ChanRange<int> range = ch.ReadAllAsync();
        ChanRange<int> first = range.GetAsyncEnumerator();
        ChanRange<int> second = range.GetAsyncEnumerator();
        Assert.Same(range, first);
        Assert.NotSame(first, second);
        Assert.True(first.MoveNextAsync().Wait());
        Assert.True(second.MoveNextAsync().Wait());
        Assert.Equal(3, first.Current + second.Current);
        Assert.False(first.MoveNextAsync().Wait());
    }

    [Fact]
    public async Task InterfacePath_TaskCodeWithCancellation_YieldsItemsThenCancels()
    {
        Chan<int> ch = Chan.Unbounded<int>();
        ch.TrySend(1);
        ch.TrySend(2);
        using var cts = new CancellationTokenSource();
        var seen = new List<int>();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () =>
        {
            await foreach (int item in ((IAsyncEnumerable<int>)ch.ReadAllAsync()).WithCancellation(cts.Token))
            {
                seen.Add(item);
                if (seen.Count == 2)
                {
                    cts.CancelAfter(TimeSpan.FromMilliseconds(20)); // fires while the next move waits
                }
            }
        });
        Assert.Equal([1, 2], seen);
        Assert.True(ch.TrySend(3));
        Assert.True(ch.TryReceive(out int left));
        Assert.Equal(3, left); // the canceled wait took nothing
    }

    [Fact]
    public void GetAsyncEnumerator_BothTokens_EitherCancels()
    {
        using var runtime = new CurrentThreadRuntime();
        Chan<int> ch = Chan.Unbounded<int>();
        using var outer = new CancellationTokenSource();
        using var inner = new CancellationTokenSource();
        Bounded.Run(runtime, async () =>
        {
            ChanRange<int> range = ch.ReadAllAsync(outer.Token).GetAsyncEnumerator(inner.Token);
            Job<bool> next = range.MoveNextAsync();
            inner.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await next);
            await range.DisposeAsync();
        });
    }

    [Fact]
    public void Linq_OverInterface_SeesEveryItem()
    {
        Chan<int> ch = Chan.Bounded<int>(8);
        for (int i = 1; i <= 5; i++)
        {
            ch.TrySend(i);
        }

        ch.Close();
        int sum = ((IAsyncEnumerable<int>)ch.ReadAllAsync()).SumAsync().AsTask().GetAwaiter().GetResult();
        Assert.Equal(15, sum);
    }

    [Fact]
    public async Task DisposeAsync_WhileMoveNextWaits_WithdrawsTheReadAndTheNextItemStays()
    {
        Chan<string> ch = Chan.Unbounded<string>();
        IAsyncEnumerator<string> e = ch.ReadAllAsync().GetAsyncEnumerator();
        Task<bool> next = e.MoveNextAsync().AsTask();
        Assert.False(next.IsCompleted);
        await e.DisposeAsync(); // gives up on the waiting read
        ch.TrySend("order-1");
        ch.Close();
        Assert.True(ch.TryReceive(out string? left)); // the abandoned read took nothing
        Assert.Equal("order-1", left);
        OperationCanceledException canceled = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => next);
        Assert.Contains("disposed", canceled.Message);
    }

    [Fact]
    public void DisposeAsync_BothTokensWhileMoveNextWaits_WithdrawsTheRead()
    {
        Chan<int> ch = Chan.Unbounded<int>();
        using var outer = new CancellationTokenSource();
        using var inner = new CancellationTokenSource();
        ChanRange<int> range = ch.ReadAllAsync(outer.Token).GetAsyncEnumerator(inner.Token); // linked source
        Job<bool> next = range.MoveNextAsync();
        Assert.False(next.IsCompleted);
        range.DisposeAsync().AsTask().GetAwaiter().GetResult();
        ch.TrySend(5);
        Assert.True(ch.TryReceive(out int left));
        Assert.Equal(5, left);
        Assert.ThrowsAny<OperationCanceledException>(() => next.Wait());
    }

    [Fact]
    public void DisposeAsync_AfterTheWaitingMoveNextGotAnItem_ItStaysItsResult()
    {
        Chan<int> ch = Chan.Unbounded<int>();
        ChanRange<int> range = ch.ReadAllAsync();
        Job<bool> next = range.MoveNextAsync();
        ch.TrySend(9); // handed to the waiting read
        range.DisposeAsync().AsTask().GetAwaiter().GetResult();
        Assert.True(next.Wait());
        Assert.Equal(9, range.Current);
    }

    /// <summary>
    /// The range keeps its last receive (waiter W, version t) while its completed MoveNextAsync is not
    /// yet consumed. W goes back to its pool and serves other receives of the same channel; each use
    /// moves the 16-bit version by 1, so after 65,536 uses W is queued again with version t. The
    /// version alone would take that other receive for the range's own and withdraw it.
    /// </summary>
    [Fact]
    public void DisposeAsync_AfterItsWaiterWasReusedByAnotherReceive_DoesNotWithdrawThatReceive()
    {
        Chan<int> ch = Chan.Unbounded<int>();
        ChanRange<int> range = ch.ReadAllAsync();
        Job<bool> next = range.MoveNextAsync(); // waits: a pooled receive waiter W, queued
        Assert.False(next.IsCompleted);
        Assert.True(ch.TrySend(1));            // W completes; the range consumes it, W goes back to its pool
        Assert.True(next.IsCompleted);          // not consumed yet: the range still counts as waiting

        object? w = null;
        Job<ReceiveResult<int>> victim = default;
        for (int i = 0; i < 65536; i++)
        {
            Job<ReceiveResult<int>> r = ch.ReceiveOkAsync();
            Assert.NotNull(r._box);
            w ??= r._box;
            Assert.Same(w, r._box);
            if (i == 65535)
            {
                victim = r; // W again, queued, with the version the range's stale receive carries
                break;
            }

            Assert.True(ch.TrySend(i));
            Assert.Equal(i, r.GetAwaiter().GetResult().Value);
        }

        range.DisposeAsync().AsTask().GetAwaiter().GetResult(); // must withdraw nothing: its read got its item
        Assert.True(next.Wait());
        Assert.Equal(1, range.Current);

        Assert.True(ch.TrySend(42));
        ReceiveResult<int> got = victim.GetAwaiter().GetResult(); // not withdrawn by the range
        Assert.Equal(42, got.Value);
    }

    /// <summary>
    /// Close claims every waiting receive under the lock, links them in a private queue and completes
    /// them after the lock, oldest first. A disposal that runs in between (here: in the oldest
    /// receive's continuation, which Close runs inline) finds the range's receive linked, in this
    /// channel's waiter, with its version: only the queue membership tells that Close already claimed
    /// it. Withdrawing it would unlink it from Close's private queue and finish it a second time.
    /// </summary>
    [Fact]
    public void DisposeAsync_WhileCloseCompletesTheClaimedReceives_LeavesItsReceiveToTheClose()
    {
        Chan<int> ch = Chan.Unbounded<int>();
        ChanRange<int> range = ch.ReadAllAsync();
        Job<ReceiveResult<int>> first = ch.ReceiveOkAsync();
        Job<ReceiveResult<int>> second = ch.ReceiveOkAsync();
        Job<bool> next = range.MoveNextAsync(); // the third receive waiting
        Assert.NotNull(first._box);
        var disposer = new RunOnCompletion(() => range.DisposeAsync().AsTask().GetAwaiter().GetResult());
        first._box.OnCompleted(disposer, first._token);

        ch.Close(); // completes first, whose continuation disposes the range; then second, then the range's
        Assert.True(disposer.Ran);
        Assert.False(first.GetAwaiter().GetResult().Ok);
        Assert.False(second.GetAwaiter().GetResult().Ok);
        Assert.False(next.Wait()); // the clean close, not the disposal's cancellation
    }

    /// <summary>Runs an action as a cell's continuation (inline, on the completing thread).</summary>
    private sealed class RunOnCompletion(Action action) : Myriad.Internal.WorkItem
    {
        internal bool Ran;

        internal override void Execute(Myriad.Internal.PerThread state)
        {
            Ran = true;
            action();
        }
    }

    [Fact]
    public void MoveNextAsync_WhileThePreviousWaits_ThrowsInvalidOperationAndTakesNothing()
    {
        Chan<int> ch = Chan.Unbounded<int>();
        ChanRange<int> range = ch.ReadAllAsync();
        Job<bool> first = range.MoveNextAsync();
        InvalidOperationException misuse = Assert.Throws<InvalidOperationException>(() => range.MoveNextAsync());
        Assert.Contains("MoveNextAsync was called while the previous call was still pending", misuse.Message);
        ch.TrySend(1);
        ch.TrySend(2);
        ch.Close();
        Assert.True(first.Wait());
        Assert.Equal(1, range.Current);
        Assert.True(range.MoveNextAsync().Wait());
        Assert.Equal(2, range.Current);
        Assert.False(range.MoveNextAsync().Wait());
    }

    [Fact]
    public void MoveNextAsync_InterfaceWhileThePreviousWaits_ThrowsInvalidOperation()
    {
        Chan<int> ch = Chan.Unbounded<int>();
        IAsyncEnumerator<int> e = ch.ReadAllAsync().GetAsyncEnumerator();
        ValueTask<bool> first = e.MoveNextAsync();
        Assert.Throws<InvalidOperationException>(() => e.MoveNextAsync());
        ch.TrySend(1);
        Assert.True(first.AsTask().GetAwaiter().GetResult());
        Assert.Equal(1, e.Current);
    }

    [Fact]
    public void MoveNextAsync_PreviousCompletedSynchronouslyNotAwaited_IsAllowed()
    {
        Chan<int> ch = Chan.Unbounded<int>();
        ch.TrySend(1);
        ch.TrySend(2);
        ChanRange<int> range = ch.ReadAllAsync();
        Job<bool> first = range.MoveNextAsync();
        Job<bool> second = range.MoveNextAsync(); // the first took its item at the call: nothing pending
        Assert.True(first.Wait());
        Assert.True(second.Wait());
        Assert.Equal(2, range.Current);
    }
}
