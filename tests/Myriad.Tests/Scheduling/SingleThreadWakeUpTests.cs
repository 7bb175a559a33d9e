using System;
using System.Runtime.CompilerServices;
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

    [Fact]
    public void Run_WhileOtherJobsPassControlThroughDelays_ReturnsWhenItsJobIsDone()
    {
        // A first version of the wake-ups' run at the end of a drive also ran due timers, and the
        // jobs they woke inline: two jobs that sleep 1 ms between 5 ms bursts of work then kept the
        // drive going, and Run never returned.
        using var runtime = new CurrentThreadRuntime();
        var stop = new StrongBox<bool>();
        runtime.SpawnDetached(stop, static s => Poll(s));
        runtime.SpawnDetached(stop, static s => Poll(s));
        var done = new ManualResetEventSlim();
        var driver = new Thread(() =>
        {
            runtime.Run(static () => Job.Delay(TimeSpan.FromMilliseconds(20)));
            done.Set();
        });
        driver.Start();
        bool returned = done.Wait(TimeSpan.FromSeconds(10));
        Volatile.Write(ref stop.Value, true);
        driver.Join();
        Assert.True(returned, "Run kept driving the other jobs after its own was done");
    }

    private static async Job Poll(StrongBox<bool> stop)
    {
        while (!Volatile.Read(ref stop.Value))
        {
            var busy = System.Diagnostics.Stopwatch.StartNew();
            while (busy.ElapsedMilliseconds < 5)
            {
                Thread.SpinWait(100);
            }

            await Job.Delay(TimeSpan.FromMilliseconds(1));
        }
    }

    [Fact]
    public void Run_SpawnedJobAJobOfAnotherRuntimeAwaits_HandsItsResultOnBeforeRunReturns()
    {
        // The spawn's hand-off of its body's result (queued, as every completion on a deterministic
        // runtime) was taken for a spawn waiting to start and left for the next drive, on the
        // seeds that end the run before it.
        using var multi = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        for (int seed = 0; seed < 60; seed++)
        {
            HandOffBeforeRunReturns(multi, seed);
        }
    }

    private static void HandOffBeforeRunReturns(MultiThreadRuntime multi, int seed)
    {
        using var deterministic = new DeterministicRuntime(seed);
        var gate = new SpawnGate();
        Job<int> spawned = default;
        deterministic.Run(async () =>
        {
            spawned = deterministic.Spawn(gate, static async g =>
            {
                int value = await g.Promise.Job + 1;
                Volatile.Write(ref g.BodyDone, true);
                return value;
            });
            await Task.Yield();
        });
        Task<int> awaiter = multi.Spawn(spawned, static async j => await j).AsTask();
        Thread.Sleep(5);

        // The run ends once the body is done; the seed decides whether the spawn's hand-off ran.
        deterministic.Run(gate, static async g =>
        {
            g.Promise.SetResult(1);
            while (!Volatile.Read(ref g.BodyDone))
            {
                await Task.Yield();
            }
        });

        Assert.True(awaiter.Wait(Patience), $"seed {seed}: the other runtime's job did not get the spawn's result");
        Assert.Equal(2, awaiter.Result);
    }

    private sealed class SpawnGate
    {
        public readonly Promise<int> Promise = new();
        public bool BodyDone;
    }
}
