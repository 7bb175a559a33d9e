using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// The "where code runs" contract: a job runs only on its own runtime's threads, whoever completes
/// what it awaits; code that is not a job, awaiting a job, resumes as after awaiting a Task and never
/// on a runtime's thread; Task code on a runtime's TaskScheduler stays there.
/// </summary>
public class WhereJobsRunTests
{
    private sealed class CriticalSection
    {
        public int Inside;
        public int Overlaps;
        public int OffDriver;
        public Thread? Driver;
    }

    [Fact]
    public void CurrentThreadRuntimeJob_ResumedByAnotherRuntimesWorker_NeverRunsBesideItsSiblings()
    {
        using var multi = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var single = new CurrentThreadRuntime();
        var section = new CriticalSection();
        var signal = Chan.Unbuffered<int>();

        TestHelpers.OnThread(() =>
        {
            section.Driver = Thread.CurrentThread;

            // A awaits a receive that a job of the multi-thread runtime completes, then holds a
            // critical section; B runs on the same single-threaded runtime meanwhile.
            Job a = single.Spawn((section, signal), static async s =>
            {
                for (int round = 0; round < 5; round++)
                {
                    await s.signal.ReceiveAsync();
                    if (Thread.CurrentThread != s.section.Driver)
                    {
                        Interlocked.Increment(ref s.section.OffDriver);
                    }

                    Volatile.Write(ref s.section.Inside, 1);
                    Thread.Sleep(20);
                    Volatile.Write(ref s.section.Inside, 0);
                }
            });
            Job b = single.Spawn(section, static async s =>
            {
                for (int i = 0; i < 200; i++)
                {
                    if (Volatile.Read(ref s.Inside) != 0)
                    {
                        Interlocked.Increment(ref s.Overlaps);
                    }

                    await Task.Yield();
                }
            });
            multi.SpawnDetached(signal, static async ch =>
            {
                for (int round = 0; round < 5; round++)
                {
                    await ch.SendAsync(round);
                }
            });
            a.Wait();
            b.Wait();
        });

        Assert.Equal(0, section.OffDriver);
        Assert.Equal(0, section.Overlaps);
    }

    private sealed class PingPongState
    {
        public readonly Chan<int> Ping = Chan.Unbuffered<int>();
        public readonly Chan<int> Pong = Chan.Unbuffered<int>();
        public Thread? Driver;
        public int OffDriver;
        public int OffWorkers;
        public MultiThreadRuntime Multi = null!;
    }

    [Fact]
    public void CrossRuntimePingPong_EveryResume_RunsOnTheResumedJobsOwnRuntime()
    {
        const int Rounds = 2_000;
        using var multi = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var single = new CurrentThreadRuntime();
        var state = new PingPongState { Multi = multi };
        multi.SpawnDetached(state, static async s =>
        {
            for (int i = 0; i < Rounds; i++)
            {
                int value = await s.Ping.ReceiveAsync();
                if (!s.Multi.IsRuntimeThread)
                {
                    Interlocked.Increment(ref s.OffWorkers);
                }

                await s.Pong.SendAsync(value + 1);
            }
        });

        int last = TestHelpers.OnThread(() =>
        {
            state.Driver = Thread.CurrentThread;
            return single.Run(state, static async s =>
            {
                int value = 0;
                for (int i = 0; i < Rounds; i++)
                {
                    await s.Ping.SendAsync(value);
                    value = await s.Pong.ReceiveAsync();
                    if (Thread.CurrentThread != s.Driver)
                    {
                        s.OffDriver++;
                    }
                }

                return value;
            });
        });

        Assert.Equal(Rounds, last);
        Assert.Equal(0, state.OffDriver);
        Assert.Equal(0, Volatile.Read(ref state.OffWorkers));
    }

    private sealed class HandOff
    {
        public readonly Chan<int> Channel = Chan.Unbuffered<int>();
        public MultiThreadRuntime Runtime = null!;
        public bool AfterReceive;
        public bool AfterDelay;
        public volatile bool Receiving;
    }

    [Fact]
    public void MultiThreadJob_ResumedByAPlainThreadsSend_StaysOnItsRuntime()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        var state = new HandOff { Runtime = runtime };
        Job job = runtime.Spawn(state, static async s =>
        {
            s.Receiving = true;
            await s.Channel.ReceiveAsync();
            s.AfterReceive = s.Runtime.IsRuntimeThread;
            await Task.Delay(5);
            s.AfterDelay = s.Runtime.IsRuntimeThread;
        });

        SpinWait.SpinUntil(() => state.Receiving, TestHelpers.DefaultTimeout);
        Thread.Sleep(50); // the receive is parked: the plain thread's send completes it
        TestHelpers.OnThread(() => state.Channel.SendAsync(1).Wait());
        TestHelpers.OnThread(job.Wait);
        Assert.True(state.AfterReceive);
        Assert.True(state.AfterDelay);
    }

    public static TheoryData<string> RuntimeKinds => new() { "multi", "multi-1", "current", "deterministic" };

    private static JobRuntime Create(string kind) => kind switch
    {
        "multi" => new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 }),
        "multi-1" => new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 }),
        "current" => new CurrentThreadRuntime(),
        _ => new DeterministicRuntime(7),
    };

    /// <summary>Waits for a task whose code runs on <paramref name="runtime"/>, driving a single-threaded one.</summary>
    private static T Await<T>(JobRuntime runtime, Task<T> task)
    {
        if (runtime is SingleThreadRuntime single)
        {
            var deadline = DateTime.UtcNow + TestHelpers.DefaultTimeout;
            while (!task.IsCompleted && DateTime.UtcNow < deadline)
            {
                if (single.RunUntilIdle() == 0)
                {
                    Thread.Sleep(1);
                }
            }
        }

        Assert.True(task.Wait(TestHelpers.DefaultTimeout), "the task did not complete");
        return task.Result;
    }

    [Theory]
    [MemberData(nameof(RuntimeKinds))]
    public void TaskCodeOnRuntimeScheduler_AfterAwaitingAJob_StaysOnThatScheduler(string kind)
    {
        using JobRuntime runtime = Create(kind);
        Task<(bool, bool, bool)> task = Task.Factory.StartNew(async () =>
        {
            await runtime.Spawn(0, static async _ =>
            {
                await Task.Yield();
            });
            bool schedulerAfterJob = TaskScheduler.Current == runtime.TaskScheduler;
            bool threadAfterJob = runtime.IsRuntimeThread;
            await Task.Delay(1);
            return (schedulerAfterJob, threadAfterJob, runtime.IsRuntimeThread);
        }, CancellationToken.None, TaskCreationOptions.DenyChildAttach, runtime.TaskScheduler).Unwrap();

        (bool schedulerAfterJob, bool threadAfterJob, bool threadAfterDelay) = Await(runtime, task);
        Assert.True(schedulerAfterJob);
        Assert.True(threadAfterJob);
        Assert.True(threadAfterDelay);
    }

    private sealed class AsyncCompletionPingPong
    {
        public JobRuntime Runtime = null!;
        public int Rounds;
        public TaskCompletionSource<int>[] Ping = null!;
        public TaskCompletionSource<int>[] Pong = null!;
        public volatile bool OffRuntime;
        public volatile bool ContextSeen;
        public volatile bool RanInsideSetResult;
        public volatile bool InSetResult;
    }

    [Theory]
    [MemberData(nameof(RuntimeKinds))]
    public void JobsAwaitingAsynchronouslyContinuingTasks_CompletedByEachOther_ResumeOnTheirRuntimeAndNeverInsideSetResult(string kind)
    {
        // Completion sources with RunContinuationsAsynchronously: the TPL posts the awaiter's resume
        // to the context the job showed it (Myriad's own), which queues the job on its runtime. The
        // job must resume there, never inside the completer's SetResult (the option's promise), and
        // never see that context itself.
        using JobRuntime runtime = Create(kind);
        const int rounds = 200;
        var s = new AsyncCompletionPingPong { Runtime = runtime, Rounds = rounds, Ping = new TaskCompletionSource<int>[rounds], Pong = new TaskCompletionSource<int>[rounds] };
        for (int i = 0; i < rounds; i++)
        {
            s.Ping[i] = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
            s.Pong[i] = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        int total = TestHelpers.OnThread(() => runtime.Run(s, static async s =>
        {
            Job<int> ponger = s.Runtime.Spawn(s, static async s =>
            {
                int sum = 0;
                for (int i = 0; i < s.Rounds; i++)
                {
                    sum += await s.Ping[i].Task;
                    Check(s);
                    s.InSetResult = true;
                    s.Pong[i].SetResult(1);
                    s.InSetResult = false;
                }

                return sum;
            });
            int received = 0;
            for (int i = 0; i < s.Rounds; i++)
            {
                s.InSetResult = true;
                s.Ping[i].SetResult(1);
                s.InSetResult = false;
                received += await s.Pong[i].Task;
                Check(s);
            }

            return received + await ponger;
        }));
        Assert.Equal(2 * rounds, total);
        Assert.False(s.OffRuntime, "a job resumed off its runtime");
        Assert.False(s.ContextSeen, "a job saw a SynchronizationContext after its await");
        Assert.False(s.RanInsideSetResult, "a job resumed inside the SetResult of a task that continues asynchronously");

        static void Check(AsyncCompletionPingPong s)
        {
            s.OffRuntime |= !s.Runtime.IsRuntimeThread;
            s.ContextSeen |= SynchronizationContext.Current is not null;
            s.RanInsideSetResult |= s.InSetResult;
        }
    }

    [Theory]
    [MemberData(nameof(RuntimeKinds))]
    public void JobAwaitingAnAsynchronouslyContinuingTask_CompletedByAPlainThread_ResumesOnItsRuntime(string kind)
    {
        using JobRuntime runtime = Create(kind);
        var tcs = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        Task<(int, bool, bool)> task = runtime.Spawn((runtime, tcs), static async s =>
        {
            int value = await s.tcs.Task;
            return (value, s.runtime.IsRuntimeThread, SynchronizationContext.Current is null);
        }).AsTask();
        var completer = new Thread(() =>
        {
            Thread.Sleep(20);
            tcs.SetResult(42);
        });
        completer.Start();
        (int value, bool onRuntime, bool noContext) = Await(runtime, task);
        completer.Join();
        Assert.Equal(42, value);
        Assert.True(onRuntime);
        Assert.True(noContext);
    }

    private static async Task<bool> AwaitSpawnFromTaskCode(MultiThreadRuntime runtime)
    {
        await runtime.Spawn(0, static async _ => await Task.Yield());
        return runtime.IsRuntimeThread;
    }

    [Fact]
    public void TaskCode_AwaitingAJob_NeverResumesOnAWorker()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        for (int i = 0; i < 50; i++)
        {
            Assert.False(Task.Run(() => AwaitSpawnFromTaskCode(runtime)).Result);
        }
    }

    [Fact]
    public void TaskCode_AwaitingAJobWithConfigureAwaitFalse_NeverResumesOnAWorker()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        bool onWorker = Task.Run(async () =>
        {
            bool any = false;
            for (int i = 0; i < 50; i++)
            {
                await runtime.Spawn(0, static async _ => await Task.Yield()).ConfigureAwait(false);
                any |= runtime.IsRuntimeThread;
                int value = await runtime.Spawn(i, static async x => { await Task.Yield(); return x; }).ConfigureAwait(false);
                Assert.Equal(i, value);
                any |= runtime.IsRuntimeThread;
            }

            return any;
        }).Result;
        Assert.False(onWorker);
    }

    [Fact]
    public void TaskCode_AwaitingAsTaskWithConfigureAwaitFalseOrForceYielding_NeverResumesOnAWorker()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        bool onWorker = Task.Run(async () =>
        {
            bool any = false;
            for (int i = 0; i < 50; i++)
            {
                await runtime.Spawn(0, static async _ => await Task.Yield()).AsTask().ConfigureAwait(false);
                any |= runtime.IsRuntimeThread;
                await runtime.Spawn(0, static async _ => await Task.Yield()).AsTask().ConfigureAwait(ConfigureAwaitOptions.ForceYielding);
                any |= runtime.IsRuntimeThread;
                await runtime.Spawn(0, static async _ => await Task.Yield()).AsValueTask().ConfigureAwait(false);
                any |= runtime.IsRuntimeThread;
            }

            return any;
        }).Result;
        Assert.False(onWorker);
    }

    [Fact]
    public void TaskCode_UnderASynchronizationContext_ResumesThroughIt()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var context = new SingleThreadSynchronizationContext();
        Task<(bool, bool)> task = context.Run(async () =>
        {
            await runtime.Spawn(0, static async _ => await Task.Yield());
            return (context.IsCurrentThread, runtime.IsRuntimeThread);
        });
        (bool onContext, bool onWorker) = task.Result;
        Assert.True(onContext);
        Assert.False(onWorker);
    }

    [Fact]
    public void Spawn_AfterDispose_ThrowsOnEveryThreadIncludingTheRuntimesOwn()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Exception? onWorker = TestHelpers.OnThread(() => runtime.Spawn(runtime, static rt =>
        {
            rt.Dispose(); // on a worker: starts the shutdown and returns
            try
            {
                rt.Spawn(0, static _ => { }).Wait();
                return Job.FromResult<Exception?>(null);
            }
            catch (Exception e)
            {
                return Job.FromResult<Exception?>(e);
            }
        }).Wait());
        Assert.IsType<ObjectDisposedException>(onWorker);
        Assert.Throws<ObjectDisposedException>(() => runtime.Spawn(0, static _ => { }));
    }

    private sealed class YieldCounter
    {
        public int Done;
    }

    [Fact]
    public void Dispose_WithYieldedJobsInFlight_ReturnsOnlyAfterAllOfThemRan()
    {
        const int Jobs = 20_000;
        for (int round = 0; round < 5; round++)
        {
            var counter = new YieldCounter();
            var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
            for (int i = 0; i < Jobs; i++)
            {
                runtime.SpawnDetached(counter, static async c =>
                {
                    await Task.Yield();
                    Interlocked.Increment(ref c.Done);
                });
            }

            TestHelpers.OnThread(runtime.Dispose);
            Assert.Equal(Jobs, Volatile.Read(ref counter.Done));
        }
    }

    [Fact]
    public void JobRuntimeCurrent_InsideAJob_IsItsRuntimeAndNullOutside()
    {
        using var multi = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        using var single = new CurrentThreadRuntime();
        Assert.Null(JobRuntime.Current);
        Assert.Same(multi, multi.Run(static async () =>
        {
            await Task.Yield();
            return JobRuntime.Current;
        }));
        Assert.Same(single, TestHelpers.OnThread(() => single.Run(static () => Job.FromResult(JobRuntime.Current))));
    }

    [Fact]
    public void Run_WithStateAndAJobBody_RunsIt()
    {
        using var runtime = new CurrentThreadRuntime();
        var box = new YieldCounter();
        TestHelpers.OnThread(() => runtime.Run(box, static async c =>
        {
            await Task.Yield();
            c.Done = 42;
        }));
        Assert.Equal(42, box.Done);
    }
}
