using System;
using System.Threading.Tasks;
using System.Runtime.CompilerServices;
using System.Collections.Concurrent;
using System.Linq;
using Myriad.Diagnostics;
using Myriad.Internal;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// <see cref="Job.WhenAll(Job[])"/> and <see cref="Job.WhenAny(Job[])"/>: what they read from the
/// caller's array, and that every job they start in the background is consumed.
/// </summary>
/// <remarks>In the heavy collection because two tests turn on the process-wide live-job tracking
/// (and one replaces the process-wide continuation-failure hook): no other test may run meanwhile.</remarks>
[Collection(HeavyCollection.Name)]
public sealed class CombinatorTests
{
    /// <summary>The name <see cref="JobDiagnostics"/> gives WhenAny's per-job observers.</summary>

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

    [Fact]
    public void WhenAnyT_LosersCompleteAfterTheWinner_EveryContestantConsumed()
    {
        JobDiagnostics.TrackLiveJobs = true;
        try
        {
            var winner = new Promise<int>();
            var loser = new Promise<int>();
            Job<(int Index, Job<int> Winner)> any = Job.WhenAny(Pass(winner.Job), Pass(loser.Job));
            Assert.Equal(2, LiveCount(nameof(Pass))); // the check below can see them: both contestants wait

            winner.SetResult(1);
            (int index, Job<int> first) = Sync.Result(any);
            Assert.Equal((0, 1), (index, first.Wait()));
            Assert.Equal(1, LiveCount(nameof(Pass))); // the loser still waits, observed

            loser.SetResult(2);
            Assert.Equal(0, LiveCount(nameof(Pass))); // its observer consumed it: released, not left pending
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }

    [Theory]
    [InlineData(40)]
    [InlineData(46)]
    [InlineData(47)]
    [InlineData(48)]
    [InlineData(49)]
    [InlineData(60)]
    public void WhenAny_CompletedContestantsAtAnyNestingDepth_FirstInArgumentOrderWins(int depth)
    {
        // A completed contestant with a cell was offered through its observer, which the trampoline
        // defers at its depth limit: there, a later contestant completed without a cell won instead.
        int winner = TestHelpers.OnThread(() => Nest(depth).Wait());
        Assert.Equal(0, winner);

        static async Job<int> Nest(int levels)
        {
            if (levels > 0)
            {
                return await Nest(levels - 1); // each level's Start runs the next one a level deeper
            }

            var done = new Promise<int>();
            done.SetResult(1);
            var (index, _) = await Job.WhenAny(done.Job, Job.FromResult(2));
            return index;
        }
    }

    [Theory]
    [InlineData(3, 0, 2)]
    [InlineData(40, 3, 31)] // past the pairwise check's limit
    public void WhenAnyT_SameJobTwice_ThrowsNamingBothIndexesAndConsumesNone(int count, int first, int second)
    {
        var promises = new Promise<int>[count];
        var jobs = new Job<int>[count];
        for (int i = 0; i < count; i++)
        {
            promises[i] = new Promise<int>();
            jobs[i] = promises[i].Job;
        }

        jobs[second] = jobs[first];
        var error = Assert.Throws<ArgumentException>(() => Job.WhenAny(jobs));
        Assert.Equal("jobs", error.ParamName);
        Assert.Contains($"index {second} is the job at index {first}", error.Message);

        // Nothing was consumed: every job can still be awaited once.
        for (int i = 0; i < count; i++)
        {
            promises[i].SetResult(i);
            if (i != second)
            {
                Assert.Equal(i, Sync.Result(jobs[i]));
            }
        }
    }

    [Fact]
    public void WhenAny_SameJobTwiceUntyped_Throws()
    {
        var promise = new Promise<int>();
        Job job = Untyped(promise.Job);
        Assert.Throws<ArgumentException>(() => Job.WhenAny(job, Job.CompletedJob, job));
        promise.SetResult(1);
        Sync.Result(job);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void WhenAllT_SameJobTwice_FailsWithArgumentExceptionNamingBothIndexes(bool completedFirst)
    {
        var promises = new[] { new Promise<int>(), new Promise<int>(), new Promise<int>() };
        Job<int> twice = promises[1].Job;
        if (completedFirst)
        {
            promises[1].SetResult(1);
        }

        Job<int[]> all = Job.WhenAll(promises[0].Job, twice, promises[2].Job, twice);
        foreach (Promise<int> promise in promises)
        {
            promise.TrySetResult(7);
        }

        var error = Assert.Throws<ArgumentException>(() => all.Wait());
        Assert.Equal("jobs", error.ParamName);
        Assert.Contains("index 3 is the job at index 1", error.Message);
    }

    [Fact]
    public void WhenAll_SameJobTwiceUntyped_FailsWithArgumentExceptionNamingBothIndexes()
    {
        var promise = new Promise<int>();
        Job job = Untyped(promise.Job);
        Job all = Job.WhenAll(job, Job.CompletedJob, job);
        promise.SetResult(1);
        var error = Assert.Throws<ArgumentException>(() => all.Wait());
        Assert.Contains("index 2 is the job at index 0", error.Message);
    }

    [Fact]
    public void WhenAllT_SameCompletedValueTwice_ReturnsBoth()
    {
        Job<int> done = Job.FromResult(7);
        Assert.Equal(new[] { 7, 7 }, Sync.Result(Job.WhenAll(done, done)));
    }

    [Fact]
    public void WhenAnyT_SameCompletedValueTwice_FirstWins()
    {
        // Jobs completed without a cell are values, not handles: the same one twice is no misuse.
        Job<int> done = Job.FromResult(7);
        var (index, winner) = Sync.Result(Job.WhenAny(done, done));
        Assert.Equal(0, index);
        Assert.Equal(7, Sync.Result(winner));
    }

    [Fact]
    public void WhenAny_LosersCompleteAfterTheWinner_EveryContestantConsumed()
    {
        JobDiagnostics.TrackLiveJobs = true;
        try
        {
            var winner = new Promise<int>();
            var losers = new[] { new Promise<int>(), new Promise<int>() };
            Job<(int Index, Job Winner)> any = Job.WhenAny(Untyped(losers[0].Job), Untyped(winner.Job), Untyped(losers[1].Job));
            Assert.Equal(3, LiveCount(nameof(Untyped)));

            winner.SetResult(1);
            Assert.Equal(1, Sync.Result(any).Index);
            losers[0].SetResult(0);
            losers[1].SetException(new FormatException("a loser's failure"));
            Assert.Equal(0, LiveCount(nameof(Untyped)));
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }

    [Theory]
    [MemberData(nameof(Runtimes.All), MemberType = typeof(Runtimes))]
    public void WhenAny_LoserCompletesAfterItsRuntimeWasDisposed_NothingReported(string kind)
    {
        // The loser's observer job suspended on the runtime; once the disposal finished, its wake
        // ends it canceled and the runtime's id no longer resolves. That cancellation is the
        // disposal at work: reported, it would be rethrown on the thread pool and end the process.
        var reported = new ConcurrentQueue<Exception>();
        Action<Exception> original = ThrowHelper.ContinuationFailed;
        ThrowHelper.ContinuationFailed = reported.Enqueue;
        try
        {
            var winner = new Promise<int>();
            var loser = new Promise<int>();
            Myriad.Scheduling.JobRuntime runtime = Runtimes.Create(kind);
            int index = runtime.Run((winner, loser), static async s =>
            {
                Job<(int Index, Job<int> Winner)> any = Job.WhenAny(s.loser.Job, s.winner.Job);
                s.winner.SetResult(1);
                return (await any).Index;
            });
            runtime.Dispose();

            loser.SetResult(2);
            Assert.Equal(1, index);
            Assert.Empty(reported);
        }
        finally
        {
            ThrowHelper.ContinuationFailed = original;
        }
    }

    [Fact]
    public void WhenAny_QueuedSpawnsFromTheirOwnRuntime_NoneRunsInsideTheCallAndTheFastOneWins()
    {
        // Awaiting a queued spawn from a worker of its runtime runs it there first (join helping);
        // WhenAny must not, or the first contestant in the list would run, and win, before the
        // others had a chance.
        using var runtime = new Myriad.Scheduling.MultiThreadRuntime(new Myriad.Scheduling.RuntimeOptions { WorkerCount = 1 });
        var slowGate = new Promise<int>();
        (bool slowStartedDuringTheCall, int winner) = Bounded.Run(runtime, async () =>
        {
            await Task.Yield(); // onto the one worker (Run may start the body on the calling thread)
            var slowStarted = new StrongBox<bool>();
            Job<int> slow = runtime.Spawn((slowStarted, slowGate), static async s =>
            {
                s.slowStarted.Value = true;
                return await s.slowGate.Job;
            });
            Job<int> fast = runtime.Spawn(static () => Job.FromResult(2));
            Job<(int Index, Job<int> Winner)> any = Job.WhenAny(slow, fast);
            bool during = slowStarted.Value;
            int index = (await any).Index;
            return (during, index);
        });

        Assert.False(slowStartedDuringTheCall);
        Assert.Equal(1, winner);
        slowGate.SetResult(1);
    }

    [Fact]
    public void WhenAny_RuntimeDisposedWhileContestantsWait_EndsWhenOneIsAbandoned()
    {
        var runtime = new Myriad.Scheduling.MultiThreadRuntime(new Myriad.Scheduling.RuntimeOptions { WorkerCount = 2 });
        var gate = new Promise<int>();
        Job<(int Index, Job<int> Winner)> any = runtime.Run(gate, static g => Job.FromResult(Job.WhenAny(AddOne(g.Job), AddOne(new Promise<int>().Job))));
        Assert.False(any.IsCompleted);

        runtime.Dispose();
        gate.SetResult(1); // wakes the first contestant after the disposal: abandoned, it ends canceled

        (int index, Job<int> winner) = TestHelpers.OnThread(() => any.Wait(), timeout: TimeSpan.FromSeconds(30));
        Assert.Equal(0, index);
        Assert.ThrowsAny<OperationCanceledException>(() => winner.Wait());

        static async Job<int> AddOne(Job<int> source) => await source + 1;
    }

    [Fact]
    public void WhenAny_LoserFailsAfterTheWinner_FailureDroppedAndNothingReported()
    {
        var reported = new ConcurrentQueue<Exception>();
        Action<Exception> original = ThrowHelper.ContinuationFailed;
        ThrowHelper.ContinuationFailed = reported.Enqueue;
        try
        {
            var winner = new Promise<int>();
            var loser = new Promise<int>();
            Job<(int Index, Job<int> Winner)> any = Job.WhenAny(Pass(winner.Job), Pass(loser.Job));
            winner.SetResult(7);
            loser.SetException(new FormatException("after the race was decided"));

            (int index, Job<int> first) = Sync.Result(any);
            Assert.Equal((0, 7), (index, first.Wait()));
            Assert.Empty(reported);
        }
        finally
        {
            ThrowHelper.ContinuationFailed = original;
        }
    }

    [Fact]
    public void WhenAny_WinnerFails_ReturnsWinnerWithoutThrowingAndContestantsConsumed()
    {
        JobDiagnostics.TrackLiveJobs = true;
        try
        {
            var winner = new Promise<int>();
            var loser = new Promise<int>();
            Job<(int Index, Job Winner)> any = Job.WhenAny(Untyped(winner.Job), Untyped(loser.Job));
            winner.SetException(new FormatException("the winner's failure"));
            (int index, Job first) = any.Wait(); // as Task.WhenAny: the race itself does not throw
            Assert.Equal(0, index);
            Assert.False(first.IsCompletedSuccessfully);
            Assert.Throws<FormatException>(() => first.Wait());

            loser.SetResult(0);
            Assert.Equal(0, LiveCount(nameof(Untyped)));
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }

    /// <summary>Live (pending, unconsumed) jobs of this class's method <paramref name="method"/>: a contestant WhenAny never consumed would stay.</summary>
    private static int LiveCount(string method) => JobDiagnostics.Snapshot().Count(j => j.Method.EndsWith("." + method, StringComparison.Ordinal));
}
