using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// A single-threaded runtime's jobs wake others: a thread blocked on a primitive, a job of another
/// runtime. Such a wake-up made on the driving thread can be queued on the runtime (always on a
/// deterministic one, at the trampoline's depth limit on a current-thread one); it must still reach
/// its target when the drive ends, and the runtime's disposal must not cancel another runtime's job.
/// </summary>
public sealed class SingleThreadWakeUpTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(10);

    public static TheoryData<int> Seeds => new() { 1, 2, 3, 4, 5, 6, 7, 8 };

    [Theory]
    [MemberData(nameof(Seeds))]
    public void Run_JobReleasesAWaitGroupAPlainThreadWaitsOn_WakesThatThread(int seed)
    {
        // Before: the blocked thread's wake-up stayed in the queue when the seed ran the Run job's
        // completion first (seeds 2, 4, 6 and 8), until the runtime was driven again or disposed.
        using var runtime = new DeterministicRuntime(seed);
        var group = new WaitGroup();
        group.Add(1);
        var waiting = new ManualResetEventSlim();
        var plain = new Thread(() =>
        {
            waiting.Set();
            group.WaitAsync().Wait();
        });
        plain.Start();
        waiting.Wait();
        Thread.Sleep(50); // let it block inside Wait

        runtime.Run(group, static g =>
        {
            g.Done();
            return default;
        });

        Assert.True(plain.Join(Patience), "the thread blocked on the WaitGroup was not woken");
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public void Run_JobCompletesAPromiseAPlainThreadWaitsOn_WakesThatThread(int seed)
    {
        using var runtime = new DeterministicRuntime(seed);
        var promise = new Promise<int>();
        int got = 0;
        var plain = new Thread(() => got = promise.Job.Wait());
        plain.Start();
        Thread.Sleep(50);

        runtime.Run(promise, static p =>
        {
            p.SetResult(5);
            return default;
        });

        Assert.True(plain.Join(Patience), "the thread blocked on the promise was not woken");
        Assert.Equal(5, got);
    }

    [Fact]
    public void Dispose_AfterReleasingAJobOfALiveRuntime_LeavesThatJobRunning()
    {
        // Before: the other runtime's job was queued on the deterministic runtime, did not resume,
        // and ended with OperationCanceledException when that runtime was disposed.
        using var multi = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var group = new WaitGroup();
        group.Add(1);
        Task<int> other = multi.Spawn(group, static async g =>
        {
            await g.WaitAsync();
            return 7;
        }).AsTask();
        Thread.Sleep(50);

        var deterministic = new DeterministicRuntime(2);
        deterministic.Run(group, static g =>
        {
            g.Done();
            return default;
        });
        Assert.True(other.Wait(Patience), "the other runtime's job did not resume");
        deterministic.Dispose();
        Assert.Equal(7, other.Result);
    }

    [Fact]
    public void Run_ReleaseAtTheDepthLimit_WakesAPlainThread()
    {
        // Before: on a current-thread runtime, a Done made at exactly the trampoline's depth limit
        // (a recursion of 47 awaits) queued the blocked thread's wake-up and left it there.
        for (int depth = 30; depth <= 110; depth++)
        {
            using var runtime = new CurrentThreadRuntime();
            var group = new WaitGroup();
            group.Add(1);
            var plain = new Thread(() => group.WaitAsync().Wait());
            plain.Start();
            Thread.Sleep(5);

            runtime.Run((group, depth), static s => DoneAtDepth(s.depth, s.group));

            Assert.True(plain.Join(Patience), $"depth {depth}: the blocked thread was not woken");
        }
    }

    private static async Job DoneAtDepth(int depth, WaitGroup group)
    {
        if (depth == 0)
        {
            group.Done();
            return;
        }

        await DoneAtDepth(depth - 1, group);
    }

    [Theory]
    [InlineData("current")]
    [InlineData("multi")]
    public void Wait_OnAJobAnotherConsumerAwaits_ThrowsAndLeavesTheResultToThatConsumer(string kind)
    {
        // Before: the wait ran the queued job inline, its completion handed the result on to the
        // first awaiter, and the wait then took it: Wait returned 42 and the first awaiter threw.
        using var blocker = new ManualResetEventSlim();
        using JobRuntime runtime = kind == "current"
            ? new CurrentThreadRuntime()
            : new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, SpareThreadDelay = TimeSpan.FromSeconds(30) });
        if (kind == "multi")
        {
            runtime.SpawnDetached(blocker, static b => b.Wait()); // the one worker is busy: the spawn below stays queued
            Thread.Sleep(50);
        }

        Job<int> job = runtime.Spawn(static () => Job.FromResult(42));
        Task<int> first = AwaitFromPlainCode(job); // registered on the job when this returns

        InvalidOperationException misuse = Assert.Throws<InvalidOperationException>(() => job.Wait());
        Assert.Contains("awaited twice", misuse.Message);

        blocker.Set();
        if (runtime is CurrentThreadRuntime current)
        {
            current.RunUntilIdle();
        }

        Assert.True(first.Wait(Patience));
        Assert.Equal(42, first.Result);
    }

    private static async Task<int> AwaitFromPlainCode(Job<int> job) => await job;
}
