using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// <see cref="RuntimeOptions.SpawnInlineBacklog"/>: a spawn made by a job while the queue it would
/// join holds the backlog starts its job on the spawning thread, before the spawn returns, with the
/// outcome, the contexts and the counts of a queued spawn.
/// </summary>
public class InlineSpawnTests
{
    private const int Capacity = 8;
    private const int Children = 20;

    /// <summary>One worker (no thief can shorten its run queue), a small run queue, no spare threads.</summary>
    private static MultiThreadRuntime OneWorker(int backlog = 256) => new(new RuntimeOptions
    {
        WorkerCount = 1,
        LocalQueueCapacity = Capacity,
        SpawnInlineBacklog = backlog,
        MaxSpareThreads = 0,
    });

    /// <summary>
    /// Spawns <see cref="Children"/> detached jobs from a job on the only worker; for each, whether
    /// its body had run when the spawn returned.
    /// </summary>
    private static bool[] RanBeforeSpawnReturned(MultiThreadRuntime runtime)
    {
        var ran = new int[Children];
        var before = new bool[Children];
        Job parent = runtime.Spawn((runtime, ran, before), static async s =>
        {
            var all = new Myriad.Coordination.WaitGroup();
            all.Add(Children);
            for (int i = 0; i < Children; i++)
            {
                s.runtime.SpawnDetached((s.ran, i, all), static c =>
                {
                    Volatile.Write(ref c.ran[c.i], 1);
                    c.all.Done();
                });
                s.before[i] = Volatile.Read(ref s.ran[i]) == 1;
            }

            await all.WaitAsync();
        });

        // Not Wait(): that could run the parent on this thread, whose spawns go to the global queue.
        Assert.True(parent.AsTask().Wait(TestHelpers.DefaultTimeout));
        Assert.All(ran, r => Assert.Equal(1, r));
        return before;
    }

    [Fact]
    public void SpawnDetached_WhileTheRunQueueIsFull_RunsTheBodyBeforeReturning()
    {
        using var runtime = OneWorker();
        bool[] before = RanBeforeSpawnReturned(runtime);

        // The first spawns fill the run queue (nobody else can take from it); every later one starts at once.
        Assert.All(before[..Capacity], b => Assert.False(b));
        Assert.All(before[Capacity..], b => Assert.True(b));
    }

    [Fact]
    public void SpawnDetached_WithBacklogZero_QueuesEverySpawn()
    {
        using var runtime = OneWorker(backlog: 0);
        bool[] before = RanBeforeSpawnReturned(runtime);
        Assert.All(before, b => Assert.False(b));
    }

    [Fact]
    public async Task Spawn_WhileTheRunQueueIsFull_RunsTheBodyBeforeReturningAndCountsIt()
    {
        using var runtime = OneWorker();
        var gate = new Promise<int>();
        (bool[] before, int[] results) = await runtime.Spawn((runtime, gate), static async s =>
        {
            var before = new bool[Children];
            var started = new int[Children];
            var jobs = new Job<int>[Children];
            for (int i = 0; i < Children; i++)
            {
                jobs[i] = s.runtime.Spawn((started, i, s.gate), static async c =>
                {
                    Volatile.Write(ref c.started[c.i], 1);
                    return c.i == 0 ? await c.gate.Job : c.i; // child 0 suspends until the gate opens
                });
                before[i] = Volatile.Read(ref started[i]) == 1;
            }

            s.gate.SetResult(-1);
            var results = new int[Children];
            for (int i = 0; i < Children; i++)
            {
                results[i] = await jobs[i];
            }

            return (before, results);
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);

        Assert.All(before[..Capacity], b => Assert.False(b));
        Assert.All(before[Capacity..], b => Assert.True(b));
        Assert.Equal(-1, results[0]);
        for (int i = 1; i < Children; i++)
        {
            Assert.Equal(i, results[i]);
        }

        // Inline or queued, every spawn counts once as spawned and once as completed.
        Assert.Equal(Children + 1, runtime.SpawnedCount);
        Assert.Equal(runtime.SpawnedCount, runtime.CompletedCount);
    }

    [Fact]
    public async Task Spawn_StartedInline_PendingBody_HandsOutTheBodysOwnJobAndItsResult()
    {
        using var runtime = OneWorker(backlog: 1);
        var gate = new Promise<int>();
        (string kind, int result) = await runtime.Spawn((runtime, gate), static async s =>
        {
            Job blocker = s.runtime.Spawn(static () => { }); // fills the backlog of one
            var started = new StrongBox<bool>();
            Job<int> child = s.runtime.Spawn((s.gate, started), static async c =>
            {
                c.started.Value = true;
                return await c.gate.Job + 1;
            });
            Assert.True(started.Value); // ran inline, up to its await
            Assert.False(child.IsCompleted);
            string kind = child._box!.GetType().Name;
            s.gate.SetResult(41);
            await blocker;
            return (kind, await child);
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);

        // A pending spawned link costs what a directly called one does: one object, the body's
        // state machine, and no spawn box around it (a million-link spawned chain holds a million).
        Assert.StartsWith("StateMachineBox", kind);
        Assert.Equal(42, result);
        Assert.Equal(runtime.SpawnedCount, runtime.CompletedCount);
    }

    private static async Job<int> AddOne(Job<int> previous) => await previous + 1;

    [Fact]
    public async Task Spawn_StartedInline_AwaitedBeforeItsBodyCompletes_CountsItsEndOnce()
    {
        using var runtime = OneWorker(backlog: 1);
        var gate = new Promise<int>();
        int result = await runtime.Spawn((runtime, gate), static async s =>
        {
            Job blocker = s.runtime.Spawn(static () => { });
            Job<int> child = s.runtime.Spawn(s.gate, static g => AddOne(g.Job));
            await blocker;

            // Completed from a plain thread after this job registered on the child (or, on a slow
            // machine, before: both orders must count the child once).
            ThreadPool.UnsafeQueueUserWorkItem(static g => { Thread.Sleep(20); g.SetResult(41); }, s.gate, preferLocal: false);
            return await child;
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);
        Assert.Equal(42, result);
        Assert.Equal(3, runtime.SpawnedCount);
        Assert.True(SpinWait.SpinUntil(() => runtime.CompletedCount == runtime.SpawnedCount, TestHelpers.DefaultTimeout));
    }

    [Fact]
    public async Task Spawn_StartedInline_PendingWhenTheRuntimeIsDisposed_CountsItsEndWhenAbandoned()
    {
        var runtime = OneWorker(backlog: 1);
        var gate = new Promise<int>();
        Job<int> child = await runtime.Spawn((runtime, gate), static async s =>
        {
            Job blocker = s.runtime.Spawn(static () => { });
            Job<int> child = s.runtime.Spawn(s.gate, static g => AddOne(g.Job));
            await blocker;
            return child;
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);
        runtime.Dispose();
        Assert.Equal(runtime.SpawnedCount - 1, runtime.CompletedCount); // the child, still pending

        // Woken after the disposal completed: it ends canceled, and its end is counted.
        gate.SetResult(41);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => child.AsTask().WaitAsync(TestHelpers.DefaultTimeout));
        Assert.Equal(runtime.SpawnedCount, runtime.CompletedCount);
    }

    [Fact]
    public async Task Spawn_StartedInline_BodyThrows_FaultsTheJobNotTheSpawner()
    {
        using var runtime = OneWorker(backlog: 1);
        Exception failure = await runtime.Spawn(runtime, static async rt =>
        {
            Job blocker = rt.Spawn(static () => { });
            Job<int> child = rt.Spawn<int>(static () => throw new InvalidTimeZoneException("from the body"));
            await blocker;
            return await Assert.ThrowsAsync<InvalidTimeZoneException>(async () => await child);
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);
        Assert.Equal("from the body", failure.Message);
    }

    [Fact]
    public void SpawnDetached_StartedInline_BodyThrows_RaisesUnobservedException()
    {
        using var runtime = OneWorker(backlog: 1);
        var raised = new TaskCompletionSource<Exception>(TaskCreationOptions.RunContinuationsAsynchronously);
        runtime.UnobservedException += (_, e) => raised.TrySetResult(e.Exception);
        runtime.Run(runtime, static async rt =>
        {
            Job blocker = rt.Spawn(static () => { });
            rt.SpawnDetached(0, (Action<int>)(static _ => throw new InvalidTimeZoneException("detached")));
            await blocker;
            return 0;
        }, CancellationToken.None);
        Assert.True(raised.Task.Wait(TestHelpers.DefaultTimeout));
        Assert.Equal("detached", raised.Task.Result.Message);
    }

    [Fact]
    public async Task Spawn_StartedInline_CanceledToken_EndsCanceledWithoutRunningTheBody()
    {
        using var runtime = OneWorker(backlog: 1);
        bool ran = await runtime.Spawn(runtime, static async rt =>
        {
            Job blocker = rt.Spawn(static () => { });
            var ranBox = new StrongBox<bool>();
            Job child = rt.Spawn(ranBox, static b => { b.Value = true; }, new CancellationToken(canceled: true));
            Assert.True(child.IsCanceled);
            await blocker;
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await child);
            return ranBox.Value;
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);
        Assert.False(ran);
    }

    private static readonly AsyncLocal<string?> Local = new();

    [Fact]
    public async Task Spawn_StartedInline_ContextsTheBodyChanges_DoNotLeakIntoTheSpawner()
    {
        using var runtime = OneWorker(backlog: 1);
        (string? inBody, string? afterSpawn, SynchronizationContext? syncAfter) = await runtime.Spawn(runtime, static async rt =>
        {
            Local.Value = "spawner";
            Job blocker = rt.Spawn(static () => { });
            var seen = new StrongBox<string?>();
            Job child = rt.Spawn(seen, static s =>
            {
                s.Value = Local.Value;
                Local.Value = "body";
                SynchronizationContext.SetSynchronizationContext(new SynchronizationContext());
            });
            (string?, string?, SynchronizationContext?) observed = (seen.Value, Local.Value, SynchronizationContext.Current);
            await blocker;
            await child;
            return observed;
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);
        Assert.Equal("spawner", inBody); // ran inline, in the spawner's context
        Assert.Equal("spawner", afterSpawn);
        Assert.Null(syncAfter);
    }

    private static int s_handled;

    [Fact]
    public async Task Spawn_StartedInline_BodyReturnsASelectThatFinishedAtOnce_RunsItsHandler()
    {
        // A select runs its handler when its job is consumed: a queued spawn consumes it inside the
        // job, and so must one started inline, even if nobody awaits the spawn's handle.
        using var runtime = OneWorker(backlog: 1);
        var channel = Chan.Unbounded<int>();
        channel.TrySend(7);
        Volatile.Write(ref s_handled, 0);
        await runtime.Spawn((runtime, channel), static async s =>
        {
            Job blocker = s.runtime.Spawn(static () => { });
            _ = s.runtime.Spawn(s.channel, static c => Select.Receive(c, static x => Interlocked.Add(ref s_handled, x)).AsJob());
            await blocker;
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);
        Assert.Equal(7, Volatile.Read(ref s_handled));
        Assert.False(channel.TryReceive(out _));
    }

    [Fact]
    public async Task JobScope_ChildStartedInline_SelectHandlerThrows_ScopeEndsWithTheFailure()
    {
        using var runtime = OneWorker(backlog: 1);
        var channel = Chan.Unbounded<int>();
        channel.TrySend(1);
        Exception failure = await runtime.Spawn((runtime, channel), static async s =>
        {
            Job blocker = s.runtime.Spawn(static () => { });
            await using var scope = new JobScope<int>(s.runtime);
            await scope.SpawnAsync(s.channel, static (c, _) => Select.Receive(c, static x => throw new InvalidTimeZoneException("handler")).AsJob());
            await blocker;
            return await Assert.ThrowsAsync<InvalidTimeZoneException>(async () => await scope);
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);
        Assert.Equal("handler", failure.Message);
    }

    [Fact]
    public async Task Spawn_UnderSuppressedFlow_BodyRunsInTheDefaultContextAsWhenQueued()
    {
        using var runtime = OneWorker();
        string?[] seen = await runtime.Spawn(runtime, static async rt =>
        {
            Local.Value = "spawner";
            var seen = new string?[Children];
            var jobs = new Job[Children];
            using (ExecutionContext.SuppressFlow())
            {
                for (int i = 0; i < Children; i++)
                {
                    jobs[i] = rt.Spawn((seen, i), static s => { s.seen[s.i] = Local.Value; });
                }
            }

            foreach (Job job in jobs)
            {
                await job;
            }

            return seen;
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);
        Assert.All(seen, v => Assert.Null(v));
    }

    [Fact]
    public void Run_FromAPlainThread_SpawnsBeyondTheBacklog_RunOnTheWaitingThread()
    {
        using var runtime = OneWorker(backlog: 4);
        using var release = new ManualResetEventSlim();
        using var blocked = new ManualResetEventSlim();

        // The only worker is blocked, so the waiting thread runs the parent itself (a guest), and
        // its spawns go to the global queue, which nobody drains meanwhile.
        runtime.SpawnDetached((release, blocked), static s =>
        {
            s.blocked.Set();
            s.release.Wait();
        });
        Assert.True(blocked.Wait(TestHelpers.DefaultTimeout));

        // A plain thread: the test's own has a SynchronizationContext, on which Run waits for the
        // workers instead of running the parent itself.
        var ranHere = new int[Children];
        TestThread waiter = TestThread.Start(() =>
        {
            int thisThread = Environment.CurrentManagedThreadId;
            try
            {
                runtime.Run((runtime, ranHere, thisThread, release), static s =>
                {
                    for (int i = 0; i < Children; i++)
                    {
                        s.runtime.SpawnDetached((s.ranHere, i, s.thisThread), static c => c.ranHere[c.i] = Environment.CurrentManagedThreadId == c.thisThread ? 1 : 2);
                    }

                    return Job.FromResult(0);
                }, CancellationToken.None);
            }
            finally
            {
                release.Set();
            }
        }, "waiter");
        Assert.True(waiter.Join(TestHelpers.DefaultTimeout));

        // The first four waited in the queue (for the worker); the rest ran on the waiting thread,
        // inside the spawn.
        Assert.True(SpinWait.SpinUntil(() => Array.TrueForAll(ranHere, r => r != 0), TestHelpers.DefaultTimeout));
        Assert.All(ranHere[..4], r => Assert.Equal(2, r));
        Assert.All(ranHere[4..], r => Assert.Equal(1, r));
    }

    [Fact]
    public void SpawnDetached_InlineBodiesThatSpawnAgain_QueueAtTheDepthLimitInsteadOfOverflowingTheStack()
    {
        // Every body spawns the next under a full backlog: inline, each spawn would nest one level
        // deeper. At the trampoline's depth limit the spawn is queued instead, so 200,000 levels end.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, SpawnInlineBacklog = 1, MaxSpareThreads = 0 });
        var done = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        runtime.SpawnDetached((runtime, done), static s =>
        {
            s.runtime.SpawnDetached(static () => { }); // the backlog of one
            Next(s.runtime, s.done, 200_000);
        });
        Assert.True(done.Task.Wait(TestHelpers.DefaultTimeout));

        static void Next(JobRuntime runtime, TaskCompletionSource<int> done, int left)
        {
            if (left == 0)
            {
                done.SetResult(0);
                return;
            }

            runtime.SpawnDetached((runtime, done, left), static s =>
            {
                s.runtime.SpawnDetached(static () => { }); // keep the backlog
                Next(s.runtime, s.done, s.left - 1);
            });
        }
    }

    [Theory]
    [InlineData(-1)]
    [InlineData((1 << 20) + 1)]
    public void SpawnInlineBacklog_OutOfRange_Throws(int value)
    {
        var options = new RuntimeOptions();
        Assert.Throws<ArgumentOutOfRangeException>(() => options.SpawnInlineBacklog = value);
    }
}
