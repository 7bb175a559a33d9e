using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Channels;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

public sealed class SelectTests
{
    [Fact]
    public void Select_OneReceiveReady_PicksOnlyThatCase()
    {
        Chan<int> empty = Chan.Unbuffered<int>();
        Chan<int> ready = Chan.Bounded<int>(4);
        ready.TrySend(7);
        int got = 0;

        int fired = Sync.Result(Select.Receive(empty, _ => Assert.Fail("not ready")).Receive(ready, v => got = v).AsJob());

        Assert.Equal(1, fired);
        Assert.Equal(7, got);
        Assert.Equal(0, ready.Count);
        Assert.False(empty.TrySend(1)); // the empty channel's case left no receiver behind
    }

    [Fact]
    public void Select_ChannelsWithEqualLockKeys_LocksEachOnceAndPicksTheReadyOne()
    {
        // Select orders its locks by identity hash code; equal codes take the try-lock path.
        (Chan<int> a, Chan<int> b) = HashCollisions.Pair(() => Chan.Bounded<int>(1));
        Assert.Equal(RuntimeHelpers.GetHashCode(a), RuntimeHelpers.GetHashCode(b));
        b.TrySend(5);
        int got = 0;

        int fired = Sync.Result(Select.Receive(a, _ => Assert.Fail("a is empty")).Receive(b, v => got = v).Receive(a, _ => Assert.Fail("a is empty")).AsJob());

        Assert.Equal(1, fired);
        Assert.Equal(5, got);
        Assert.True(a.TrySend(1)); // both locks were released
        Assert.True(b.TrySend(2));
    }

    [Fact]
    public void Select_OneSendReady_SendsOnlyThatItem()
    {
        Chan<int> full = Chan.Bounded<int>(1);
        full.TrySend(1);
        Chan<int> space = Chan.Bounded<int>(1);

        int fired = Sync.Result(Select.Send(full, 2).Send(space, 3).AsJob());

        Assert.Equal(1, fired);
        Assert.True(full.TryReceive(out int first));
        Assert.Equal(1, first);
        Assert.False(full.TryReceive(out _)); // the losing send delivered nothing
        Assert.True(space.TryReceive(out int sent));
        Assert.Equal(3, sent);
    }

    [Fact]
    public void Select_SendToWaitingReceiver_HandsItemOver()
    {
        Chan<string> ch = Chan.Unbuffered<string>();
        Job<string> receiver = ch.ReceiveAsync();
        bool sent = false;

        int fired = Sync.Result(Select.Send(ch, "hello", () => sent = true).AsJob());

        Assert.Equal(0, fired);
        Assert.True(sent);
        Assert.Equal("hello", Sync.Result(receiver));
    }

    [Fact]
    public void Select_NoneReady_DefaultFiresAndNothingIsQueued()
    {
        Chan<int> a = Chan.Unbuffered<int>();
        Chan<int> b = Chan.Bounded<int>(1);
        bool defaulted = false;

        int fired = Sync.Result(Select.Receive(a).Send(a, 1).Receive(b).Default(() => defaulted = true).AsJob());

        Assert.Equal(3, fired);
        Assert.True(defaulted);
        Assert.False(a.TrySend(5)); // no receive case left behind
        Assert.False(a.TryReceive(out _)); // no send case left behind
    }

    [Fact]
    public void Select_NoneReady_WaitsUntilOneCaseBecomesReady()
    {
        Chan<int> a = Chan.Unbuffered<int>();
        Chan<string> b = Chan.Unbuffered<string>();
        string? got = null;

        Job<int> select = Select.Receive(a, _ => Assert.Fail("a never sends")).Receive(b, v => got = v).AsJob();
        Assert.False(select.IsCompleted);
        Assert.True(b.TrySend("x"));

        Assert.Equal(1, Sync.Result(select));
        Assert.Equal("x", got);
        Assert.False(a.TrySend(1)); // the losing case was unlinked: it cannot take a later item
    }

    [Fact]
    public void Select_LosingCase_NeverConsumesItem()
    {
        Chan<int> a = Chan.Bounded<int>(1);
        Chan<int> b = Chan.Bounded<int>(1);
        Job<int> select = Select.Receive(a).Receive(b).AsJob();

        Assert.True(a.TrySend(1));
        Assert.True(b.TrySend(2)); // arrives after the select committed to a

        Assert.Equal(0, Sync.Result(select));
        Assert.True(b.TryReceive(out int kept));
        Assert.Equal(2, kept);
    }

    [Fact]
    public void Select_WaitingSendCase_DeliversOnlyWhenItWins()
    {
        Chan<int> a = Chan.Unbuffered<int>();
        Chan<int> b = Chan.Unbuffered<int>();
        Job<int> select = Select.Send(a, 10).Send(b, 20).AsJob();

        Assert.True(b.TryReceive(out int got));
        Assert.Equal(20, got);
        Assert.Equal(1, Sync.Result(select));
        Assert.False(a.TryReceive(out _)); // the losing send case is gone
    }

    [Fact]
    public void Select_SameChannelSendAndReceive_MatchesOnlyOthers()
    {
        Chan<int> ch = Chan.Unbuffered<int>();
        Job<int> select = Select.Send(ch, 1).Receive(ch).AsJob();
        Assert.False(select.IsCompleted); // a select never matches itself

        Assert.True(ch.TryReceive(out int got));
        Assert.Equal(1, got);
        Assert.Equal(0, Sync.Result(select));
    }

    [Fact]
    public void Select_SameChannelTwice_FiresOnceAndLeavesNothingQueued()
    {
        Chan<int> ch = Chan.Unbuffered<int>();
        int got = 0;
        Job<int> select = Select.Receive(ch, v => got = v).Receive(ch, v => got = -v).AsJob();

        Assert.True(ch.TrySend(5));
        Assert.False(ch.TrySend(6)); // the second case went stale with the first one's commit: nobody receives

        int fired = Sync.Result(select);
        Assert.Equal(0, fired); // queued in order: the first case was first in line
        Assert.Equal(5, got);
    }

    [Fact]
    public void Select_MixedElementTypes_EachHandlerGetsItsType()
    {
        Chan<int> ints = Chan.Bounded<int>(1);
        Chan<string> strings = Chan.Bounded<string>(1);
        Chan<DateTime> dates = Chan.Bounded<DateTime>(1);
        strings.TrySend("s");

        string? got = null;
        int fired = Sync.Result(Select.Receive(ints, _ => { }).Receive(strings, s => got = s).Send(dates, DateTime.MaxValue).Default().AsJob());

        // The send case was ready too; either may win, and exactly one did.
        Assert.True(fired is 1 or 2);
        Assert.Equal(fired == 1, got == "s");
        Assert.Equal(fired == 1 ? 0 : 1, strings.Count);
        Assert.Equal(fired == 2 ? 1 : 0, dates.Count);
    }

    [Fact]
    public void Select_ReceiveOkOnClosedChannel_FiresWithOkFalse()
    {
        Chan<int> open = Chan.Unbuffered<int>();
        Chan<int> closed = Chan.Unbuffered<int>();
        closed.Close();
        ReceiveResult<int> seen = new(1);

        int fired = Sync.Result(Select.Receive(open).ReceiveOk(closed, r => seen = r).AsJob());

        Assert.Equal(1, fired);
        Assert.False(seen.Ok);
    }

    [Fact]
    public void Select_ReceiveOnClosedChannel_ThrowsChannelClosed()
    {
        Chan<int> closed = Chan.Unbuffered<int>();
        Job<int> select = Select.Receive(Chan.Unbuffered<int>()).Receive(closed).AsJob();
        closed.Close();

        Assert.True(select.IsCompleted);
        Assert.Throws<ChannelClosedException>(() => select.GetAwaiter().GetResult());
    }

    [Fact]
    public void Select_ReceiveOnChannelClosedWithError_ThrowsTheError()
    {
        Chan<int> closed = Chan.Unbuffered<int>();
        var error = new FormatException();
        closed.Close(error);

        Job<int> select = Select.ReceiveOk(closed).AsJob();

        Assert.Same(error, Assert.Throws<FormatException>(() => select.GetAwaiter().GetResult()));
    }

    [Fact]
    public void Select_SendOnClosedChannel_ThrowsChannelClosed()
    {
        Chan<int> ch = Chan.Bounded<int>(1);
        ch.Close();

        Job<int> select = Select.Send(ch, 1).AsJob();

        Assert.Throws<ChannelClosedException>(() => select.GetAwaiter().GetResult());
    }

    [Fact]
    public void Select_WaitingSendCaseWhenChannelCloses_Throws()
    {
        Chan<int> ch = Chan.Unbuffered<int>();
        Job<int> select = Select.Send(ch, 1).Receive(Chan.Unbuffered<int>()).AsJob();

        ch.Close();

        Assert.Throws<ChannelClosedException>(() => select.GetAwaiter().GetResult());
    }

    [Fact]
    public void Select_Timeout_FiresWhenNothingIsReady()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Chan<int> ch = Chan.Unbuffered<int>();
        bool timedOut = false;

        int fired = Bounded.Run(runtime, async () =>
            await Select.Receive(ch).Timeout(TimeSpan.FromMilliseconds(20), () => timedOut = true));

        Assert.Equal(1, fired);
        Assert.True(timedOut);
        Assert.False(ch.TrySend(1)); // the receive case was removed
    }

    [Fact]
    public void Select_ZeroTimeoutNothingReady_FiresAtOnce()
    {
        // As Job.Delay(TimeSpan.Zero) and Task.Delay(0) complete at once: a zero timeout polls the
        // cases once and fires, instead of waiting for the next timer tick (a millisecond or more).
        Chan<int> ch = Chan.Unbuffered<int>();
        bool timedOut = false;

        Job<int> select = Select.Receive(ch, _ => Assert.Fail("not ready")).Timeout(TimeSpan.Zero, () => timedOut = true).AsJob();

        Assert.True(select.IsCompleted, "a zero timeout waited for the timer");
        Assert.Equal(1, Sync.Result(select));
        Assert.True(timedOut);
        Assert.False(ch.TrySend(1)); // no case was left queued

        Job<int> timeoutOnly = default(SelectBuilder).Timeout(TimeSpan.Zero).AsJob();
        Assert.True(timeoutOnly.IsCompleted);
        Assert.Equal(0, Sync.Result(timeoutOnly));
    }

    [Fact]
    public void Select_ZeroTimeoutCaseReady_PicksTheCase()
    {
        Chan<int> ch = Chan.Bounded<int>(1);
        ch.TrySend(3);
        int got = 0;

        int fired = Sync.Result(Select.Receive(ch, v => got = v).Timeout(TimeSpan.Zero, () => Assert.Fail("a case was ready")).AsJob());

        Assert.Equal(0, fired);
        Assert.Equal(3, got);
    }

    [Fact]
    public void Select_ReadyBeforeTimeout_TimeoutNeverFires()
    {
        using var runtime = new CurrentThreadRuntime();
        Chan<int> ch = Chan.Unbuffered<int>();
        bool timedOut = false;

        int fired = Bounded.Run(runtime, async () =>
        {
            runtime.SpawnDetached(ch, static async c =>
            {
                await Job.Delay(5);
                await c.SendAsync(1);
            });
            int result = await Select.Receive(ch).Timeout(TimeSpan.FromSeconds(20), () => timedOut = true);
            await Job.Delay(10);
            return result;
        });

        Assert.Equal(0, fired);
        Assert.False(timedOut);
    }

    [Fact]
    public void Select_TimeoutOnly_ActsAsDelay()
    {
        using var runtime = new CurrentThreadRuntime();
        int fired = Bounded.Run(runtime, async () => await default(SelectBuilder).Timeout(TimeSpan.FromMilliseconds(1)));
        Assert.Equal(0, fired);
    }

    [Fact]
    public void Select_DefaultOnly_FiresAtOnce()
    {
        Assert.Equal(0, Sync.Result(default(SelectBuilder).Default().AsJob()));
    }

    [Fact]
    public void Select_CanceledWhileWaiting_ThrowsAndTakesNothing()
    {
        Chan<int> ch = Chan.Bounded<int>(1);
        using var cts = new CancellationTokenSource();
        Job<int> select = Select.Receive(ch, _ => Assert.Fail("canceled")).WithCancellation(cts.Token).AsJob();

        cts.Cancel();
        Assert.True(ch.TrySend(1));

        Assert.Throws<OperationCanceledException>(() => select.GetAwaiter().GetResult());
        Assert.Equal(1, ch.Count);
    }

    [Fact]
    public void Select_TokenAlreadyCanceled_ThrowsEvenIfACaseIsReady()
    {
        Chan<int> ch = Chan.Bounded<int>(1);
        ch.TrySend(1);

        Job<int> select = Select.Receive(ch).WithCancellation(new CancellationToken(canceled: true)).AsJob();

        Assert.Throws<OperationCanceledException>(() => select.GetAwaiter().GetResult());
        Assert.Equal(1, ch.Count);
    }

    [Fact]
    public void Select_HandlerThrows_ExceptionSurfacesFromAwait()
    {
        Chan<int> ch = Chan.Bounded<int>(1);
        ch.TrySend(1);

        Job<int> select = Select.Receive(ch, _ => throw new FormatException()).AsJob();

        Assert.Throws<FormatException>(() => select.GetAwaiter().GetResult());
        Assert.Equal(0, ch.Count); // the case did fire
    }

    [Fact]
    public void Select_SelectAgainstSelect_MatchAcrossWorkers()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Chan<int> ch = Chan.Unbuffered<int>();
        Chan<int> never = Chan.Unbuffered<int>();
        const int Rounds = 2_000;

        long sum = Bounded.Run(runtime, async () =>
        {
            Job sender = runtime.Spawn((ch, never), static async s =>
            {
                for (int i = 1; i <= Rounds; i++)
                {
                    Assert.Equal(0, await Select.Send(s.ch, i).Receive(s.never));
                }
            });
            long total = 0;
            for (int i = 0; i < Rounds; i++)
            {
                int got = 0;
                Assert.Equal(1, await Select.Receive(never).Receive(ch, v => got = v));
                total += got;
            }

            await sender;
            return total;
        });

        Assert.Equal((long)Rounds * (Rounds + 1) / 2, sum);
    }

    [Theory]
    [InlineData("multi")]
    [InlineData("current")]
    public void Select_ChainOfHundredThousandStages_DoesNotOverflowTheStack(string runtimeName)
    {
        // E2's chain with every hop a select on both sides: each completion resumes the next stage
        // inline until the trampoline cuts the chain.
        const int N = 100_000;
        using JobRuntime runtime = Runtimes.Create(runtimeName);
        int result = Bounded.Run(runtime, async () =>
        {
            Chan<int> never = Chan.Unbuffered<int>();
            Chan<int> first = Chan.Unbuffered<int>();
            Chan<int> left = first;
            for (int i = 0; i < N; i++)
            {
                Chan<int> right = Chan.Unbuffered<int>();
                runtime.SpawnDetached((left, right, never), static async s =>
                {
                    int got = 0;
                    await Select.Receive(s.left, v => got = v).Receive(s.never);
                    await Select.Send(s.right, got + 1).Receive(s.never);
                });
                left = right;
            }

            await first.SendAsync(0);
            return await left.ReceiveAsync();
        });

        Assert.Equal(N, result);
    }

    [Fact]
    public void Select_SeveralReady_ChoosesUniformlyAtRandom()
    {
        // Four always-ready channels; 40,000 selects. Under uniform choice the chi-square statistic
        // with 3 degrees of freedom exceeds 50 with probability below 1e-10: this cannot flake, while
        // a biased choice (say, always the first ready case in a fixed or rotated order) fails it
        // by orders of magnitude.
        const int Selects = 40_000;
        var chans = new Chan<int>[4];
        for (int i = 0; i < chans.Length; i++)
        {
            chans[i] = Chan.Unbounded<int>();
            for (int k = 0; k < Selects; k++)
            {
                chans[i].TrySend(k);
            }
        }

        var counts = new int[4];
        for (int s = 0; s < Selects; s++)
        {
            int fired = Sync.Result(Select.Receive(chans[0]).Receive(chans[1]).Receive(chans[2]).Receive(chans[3]).AsJob());
            counts[fired]++;
        }

        double expected = Selects / 4.0;
        double chiSquare = 0;
        foreach (int c in counts)
        {
            chiSquare += (c - expected) * (c - expected) / expected;
        }

        Assert.True(chiSquare < 50, $"counts {string.Join(", ", counts)}: chi-square {chiSquare:F1}");
        for (int i = 0; i < chans.Length; i++)
        {
            Assert.Equal(Selects - counts[i], chans[i].Count); // each select took exactly one item
        }
    }

    [Fact]
    public void Select_ReadyAmongMany_OnlyReadyCasesAreChosen()
    {
        // Cases 1 and 3 of 6 are ready: over many selects, only they fire, each about half the time.
        var chans = new Chan<int>[6];
        for (int i = 0; i < chans.Length; i++)
        {
            chans[i] = i % 2 == 1 && i != 5 ? Chan.Unbounded<int>() : Chan.Unbuffered<int>();
        }

        var counts = new int[6];
        for (int s = 0; s < 4_000; s++)
        {
            chans[1].TrySend(s);
            chans[3].TrySend(s);
            SelectBuilder select = default;
            foreach (Chan<int> ch in chans)
            {
                select = select.Receive(ch);
            }

            counts[Sync.Result(select.AsJob())]++;
        }

        Assert.Equal(0, counts[0] + counts[2] + counts[4] + counts[5]);
        Assert.InRange(counts[1], 1_500, 2_500); // binomial(4000, 1/2): 8 standard deviations either way
        Assert.InRange(counts[3], 1_500, 2_500);
    }

    [Fact]
    public void Select_NoCases_ThrowsInvalidOperation()
    {
        Assert.Throws<InvalidOperationException>(() => default(SelectBuilder).AsJob());
        Assert.Throws<InvalidOperationException>(() => default(SelectBuilder).WithCancellation(default).GetAwaiter());
    }

    [Fact]
    public void Select_DefaultTwiceOrWithTimeout_ThrowsInvalidOperation()
    {
        Chan<int> ch = Chan.Unbuffered<int>();
        Assert.Throws<InvalidOperationException>(() => Select.Receive(ch).Default().Default());
        Assert.Throws<InvalidOperationException>(() => Select.Receive(ch).Default().Timeout(TimeSpan.FromSeconds(1)));
        Assert.Throws<InvalidOperationException>(() => Select.Receive(ch).Timeout(TimeSpan.FromSeconds(1)).Timeout(TimeSpan.FromSeconds(1)));
    }

    [Fact]
    public void WithCancellation_Twice_ThrowsInvalidOperationAndTheNextSelectWorks()
    {
        // One token silently replacing the other left a select waiting after the first fired.
        Chan<int> ch = Chan.Bounded<int>(1);
        using var cts = new CancellationTokenSource();
        InvalidOperationException error = Assert.Throws<InvalidOperationException>(() => Select.Receive(ch).WithCancellation(cts.Token).WithCancellation(CancellationToken.None));
        Assert.Contains("only one cancellation token", error.Message);

        ch.TrySend(7);
        int received = 0;
        Assert.Equal(0, Sync.Result(Select.Receive(ch, v => received = v).WithCancellation(cts.Token).AsJob()));
        Assert.Equal(7, received);
    }

    [Fact]
    public void Select_NegativeTimeout_ThrowsArgumentOutOfRange()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => Select.Receive(Chan.Unbuffered<int>()).Timeout(TimeSpan.FromMilliseconds(-2)));
    }

    [Fact]
    public void Select_BuilderReusedAfterAwait_ThrowsInvalidOperation()
    {
        Chan<int> ch = Chan.Bounded<int>(1);
        ch.TrySend(1);
        SelectBuilder select = Select.Receive(ch).Default();
        Sync.Result(select.AsJob());

        Assert.Throws<InvalidOperationException>(() => select.AsJob());
        Assert.Throws<InvalidOperationException>(() => select.Receive(ch));
    }
}
