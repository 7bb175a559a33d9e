using System;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>A deterministic runtime that can never make progress throws <see cref="DeadlockException"/> naming every stuck job.</summary>
public sealed class DeadlockTests
{
    [Fact]
    public void Run_EveryJobStuck_ThrowsNamingEachJobAndWhatItWaitsOn()
    {
        using var runtime = new DeterministicRuntime(3, "stuck");
        var nobodyWrites = Chan.Unbuffered<int>();
        var nobodyReads = Chan.Unbuffered<string>();
        var mutex = new JobMutex();
        var group = new WaitGroup();
        group.Add(1);
        var promise = new Promise<int>();

        DeadlockException error = Assert.Throws<DeadlockException>(() => Bounded.Run(runtime, async () =>
        {
            JobMutex.Releaser held = await mutex.LockAsync();
            Job receiver = runtime.Spawn(async () => await ReceiverJob(nobodyWrites));
            Job sender = runtime.Spawn(async () => await SenderJob(nobodyReads));
            Job locker = runtime.Spawn(async () => await LockerJob(mutex));
            Job waiter = runtime.Spawn(async () => await GroupWaiterJob(group));
            Job promised = runtime.Spawn(async () => await PromiseJob(promise));
            await Job.WhenAll(receiver, sender, locker, waiter, promised);
            held.Dispose();
        }));

        string message = error.Message;
        Assert.Contains("stuck", message);
        Assert.Contains("ReceiverJob", message);
        Assert.Contains("Chan<Int32>.ReceiveAsync", message);
        Assert.Contains("SenderJob", message);
        Assert.Contains("Chan<String>.SendAsync", message);
        Assert.Contains("LockerJob", message);
        Assert.Contains("JobMutex.LockAsync", message);
        Assert.Contains("GroupWaiterJob", message);
        Assert.Contains("WaitGroup.WaitAsync", message);
        Assert.Contains("PromiseJob", message);
        Assert.Contains("Promise<Int32>", message);
        Assert.True(error.LiveJobs.Count >= 6, message);
        Assert.IsAssignableFrom<InvalidOperationException>(error);
    }

    [Theory]
    [InlineData(-1.0)]
    [InlineData(3.0e9)]
    public void DeadlockGracePeriod_NegativeOrBeyondInt32Milliseconds_Throws(double milliseconds)
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new DeterministicRuntime(1) { DeadlockGracePeriod = TimeSpan.FromMilliseconds(milliseconds) });
    }

    [Fact]
    public void Run_JobReadingAnEmptyChannelThroughItsReaderView_ThrowsDeadlockException()
    {
        // The reader's ReadAsync is a ValueTask over a Myriad cell that the channel's receive
        // completes: the job awaiting it counts as waiting inside the runtime, as a direct receive does.
        using var runtime = new DeterministicRuntime(1, "stuck");
        var channel = Chan.Unbuffered<int>();
        DeadlockException error = Assert.Throws<DeadlockException>(() => Bounded.Run(runtime, async () =>
        {
            await channel.Reader.ReadAsync();
        }));
        Assert.Single(error.LiveJobs);
        Assert.Contains("ChannelReader.ReadAsync", error.Message);
    }

    [Fact]
    public void Run_SpawnsWhoseBodiesReturnAnotherRuntimesJob_WaitInsteadOfThrowing()
    {
        // A spawn whose body returns another runtime's job (no await) waits for it as the spawn's
        // continuation, with no suspended job of its own: the check followed only suspended jobs,
        // and reported a deadlock once the grace period passed although the other runtime was
        // about to complete the job.
        using var other = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        using var runtime = new DeterministicRuntime(1, "waits");
        TimeSpan outside = runtime.DeadlockGracePeriod * 3;

        Assert.Equal(42, TestHelpers.OnThread(() => runtime.Run((other, outside), static s => s.other.Spawn(s.outside, static async d =>
        {
            await Task.Delay(d);
            return 42;
        }))));

        Assert.Equal(43, TestHelpers.OnThread(() => runtime.Run((runtime, other, outside), static async s => await s.runtime.Spawn((s.other, s.outside), static t => t.other.Spawn(t.outside, static async d =>
        {
            await Task.Delay(d);
            return 43;
        })))));

        // A chain longer than the check follows (20 spawns, each returning the next one's job) is
        // not proven stuck either.
        Assert.Equal(44, TestHelpers.OnThread(() => runtime.Run((runtime, other, outside), static s => Nested(s.runtime, s.other, s.outside, 20))));

        static Job<int> Nested(DeterministicRuntime runtime, MultiThreadRuntime other, TimeSpan outside, int depth) =>
            depth == 0
                ? other.Spawn(outside, static async d =>
                {
                    await Task.Delay(d);
                    return 44;
                })
                : runtime.Spawn((runtime, other, outside, depth), static n => Nested(n.runtime, n.other, n.outside, n.depth - 1));
    }

    [Fact]
    public void Run_WhenAnyOverAnotherRuntimesJob_WaitsInsteadOfThrowing()
    {
        // Job.WhenAny watches its contestants through observers, not awaits: the check saw only the
        // race's promise, which waits for no cell, and reported a deadlock once the grace period
        // passed although the other runtime was about to complete the contestant.
        using var other = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        using var runtime = new DeterministicRuntime(1, "races");
        TimeSpan outside = runtime.DeadlockGracePeriod * 3;

        Assert.Equal(42, TestHelpers.OnThread(() => runtime.Run((other, outside), static async s =>
        {
            Job<int> remote = s.other.Spawn(s.outside, static async d =>
            {
                await Task.Delay(d);
                return 42;
            });
            var (_, winner) = await Job.WhenAny(remote);
            return await winner;
        })));

        Assert.Equal(1, TestHelpers.OnThread(() => runtime.Run((other, outside), static async s =>
        {
            // Untyped, beside a contestant of this runtime that never completes.
            Job remote = s.other.Spawn(s.outside, static async d => await Task.Delay(d));
            Job never = Chan.Unbuffered<int>().ReceiveAsync().AsJob();
            var (index, _) = await Job.WhenAny(never, remote);
            return index;
        })));
    }

    [Fact]
    public void Run_WaitAsyncOnAnotherRuntimesJob_WaitsInsteadOfThrowing()
    {
        using var other = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        using var runtime = new DeterministicRuntime(1, "bounded wait");
        TimeSpan outside = runtime.DeadlockGracePeriod * 3;
        using var cts = new System.Threading.CancellationTokenSource();

        Assert.Equal(42, TestHelpers.OnThread(() => runtime.Run((other, outside, cts.Token), static async s =>
            await s.other.Spawn(s.outside, static async d =>
            {
                await Task.Delay(d);
                return 42;
            }).WaitAsync(s.Token))));
    }

    [Fact]
    public void Run_WhenAnyOverStuckJobsOnly_StillThrowsDeadlockException()
    {
        using var runtime = new DeterministicRuntime(1, "stuck race");
        Assert.Throws<DeadlockException>(() => TestHelpers.OnThread(() => runtime.Run(static async () =>
        {
            var nobodyWrites = Chan.Unbuffered<int>();
            var (_, winner) = await Job.WhenAny(nobodyWrites.ReceiveAsync(), new Promise<int>().Job);
            return await winner;
        })));
    }

    [Fact]
    public void Run_JobAwaitingAPromiseThroughAValueTask_ThrowsNamingThePromise()
    {
        using var runtime = new DeterministicRuntime(1, "stuck");
        var promise = new Promise<int>();
        DeadlockException error = Assert.Throws<DeadlockException>(() => Bounded.Run(runtime, async () =>
        {
            await runtime.Spawn(promise, static async p => await p.Job.AsValueTask());
        }));
        Assert.Contains("Promise", error.Message);
    }

    [Fact]
    public void Run_JobAwaitingAStuckJobThroughAValueTask_ThrowsListingBoth()
    {
        using var runtime = new DeterministicRuntime(1, "stuck");
        var channel = Chan.Unbuffered<int>();
        DeadlockException error = Assert.Throws<DeadlockException>(() => Bounded.Run(runtime, async () =>
        {
            await runtime.Spawn(channel, static async c => await ReceiveOnce(c).AsValueTask());
        }));
        Assert.Contains("Chan<Int32>.ReceiveAsync", error.Message);
        Assert.Contains("ReceiveOnce", error.Message);
    }

    private static async Job<int> ReceiveOnce(Chan<int> channel) => await channel.ReceiveAsync();

    [Fact]
    public void Run_LambdaThatDeadlocks_ListsItOnceWithoutNamingTheWaitAgain()
    {
        // The job Run waits on is a spawn of the lambda, which leads to the lambda's own job, listed
        // as #1: the report once added "The blocking wait is for a spawned job waiting for a
        // lambda ...", naming that job a second time.
        using var runtime = new DeterministicRuntime(1, "stuck");
        DeadlockException error = Assert.Throws<DeadlockException>(() => TestHelpers.OnThread(() => runtime.Run(static async () =>
        {
            var channel = Chan.Unbuffered<int>();
            await channel.ReceiveAsync();
        })));
        Assert.Contains("1 live job(s)", error.Message);
        Assert.DoesNotContain("The blocking wait is for", error.Message);
    }

    [Fact]
    public void Run_OnAPromisesJobNobodySets_ThrowsNamingWhatTheWaitIsFor()
    {
        // The job Run waits on is no async method (the promise's own cell): the live-job list is
        // empty, so the message names what the wait is for, and ends without a line break.
        using var runtime = new DeterministicRuntime(1, "stuck");
        var promise = new Promise<int>();
        DeadlockException error = Assert.Throws<DeadlockException>(() => TestHelpers.OnThread(() => runtime.Run(promise, static p => p.Job)));
        Assert.Contains("0 live job(s)", error.Message);
        Assert.Contains("The blocking wait is for a", error.Message);
        Assert.Contains("Promise", error.Message);
        Assert.Equal(error.Message.TrimEnd(), error.Message);
        Assert.Empty(error.LiveJobs);
    }

    [Fact]
    public void WaitInsideAJob_OnAJobAwaitingAVirtualDelay_AdvancesTheClockAndReturns()
    {
        // The blocking wait drives the runtime from inside a job: when nothing is queued it must move
        // the virtual clock on as Run does, or the hour never passes and the wait parks forever.
        using var runtime = new DeterministicRuntime(5);
        DateTimeOffset start = runtime.TimeProvider.GetUtcNow();
        int value = Bounded.Run(runtime, () => Job.FromResult(runtime.Spawn(static async () =>
        {
            await Job.Delay(TimeSpan.FromHours(1));
            return 1;
        }).Wait()));

        Assert.Equal(1, value);
        Assert.True(runtime.TimeProvider.GetUtcNow() - start >= TimeSpan.FromHours(1));
    }

    [Fact]
    public void WaitInsideAJob_OnAJobNothingCanWake_ThrowsDeadlockException()
    {
        using var runtime = new DeterministicRuntime(6);
        var nobodyWrites = Chan.Unbuffered<int>();
        DeadlockException error = Assert.Throws<DeadlockException>(() => Bounded.Run(runtime, () =>
        {
            runtime.Spawn(async () => await ReceiverJob(nobodyWrites)).Wait();
            return default(Job);
        }));
        Assert.Contains("ReceiverJob", error.Message);
    }

    [Theory]
    [InlineData("delay")]
    [InlineData("yield")]
    public void WaitInsideAJob_AfterTheJobSuspendedOnce_ThrowsDeadlockExceptionNotAHang(string earlierAwait)
    {
        // The job is listed since its first suspension and runs again when it blocks: it awaits
        // nothing then, which must not read as a wait on something outside the runtime.
        using var runtime = new DeterministicRuntime(7);
        DeadlockException error = Assert.Throws<DeadlockException>(() => Bounded.Run(runtime, async () =>
        {
            var nobodySets = new Promise<int>();
            if (earlierAwait == "delay")
            {
                await Job.Delay(1);
            }
            else
            {
                await Job.Yield();
            }

            BlockOn(nobodySets);
        }));
        Assert.Contains("running", error.Message);

        static void BlockOn(Promise<int> promise) => promise.Job.Wait(); // in a helper, as MYR0003 would flag it inline
    }

    [Fact]
    public void WaitInsideAJob_AfterTheJobSuspendedOnce_OnAJobThatCompletes_Returns()
    {
        using var runtime = new DeterministicRuntime(8);
        int value = Bounded.Run(runtime, async () =>
        {
            await Job.Delay(1);
            return Get(runtime);
        });
        Assert.Equal(5, value);

        static int Get(DeterministicRuntime runtime) => runtime.Spawn(static async () =>
        {
            await Job.Delay(TimeSpan.FromMinutes(1));
            return 5;
        }).Wait();
    }

    [Fact]
    public void Run_JobAwaitingATaskOfAnotherThread_IsNotADeadlock()
    {
        using var runtime = new DeterministicRuntime(4);
        int value = Bounded.Run(runtime, async () => await Task.Run(async () =>
        {
            await Task.Delay(300);
            return 7;
        }));
        Assert.Equal(7, value);
    }

    [Fact]
    public void Run_ChannelFedFromAnotherThreadWithinTheGracePeriod_IsNotADeadlock()
    {
        // The sender comes 10 ms in, well inside a grace period that a loaded thread pool (the IO
        // tests run alongside) cannot overrun; with the default 100 ms it once did.
        using var runtime = new DeterministicRuntime(5) { DeadlockGracePeriod = TimeSpan.FromSeconds(10) };
        var channel = Chan.Unbuffered<int>();
        _ = Task.Run(async () =>
        {
            await Task.Delay(10);
            await channel.SendAsync(9).AsTask();
        });
        Assert.Equal(9, Bounded.Run(runtime, async () => await channel.ReceiveAsync()));
    }

    [Fact]
    public void Run_OnCurrentThreadRuntime_NeverReportsADeadlock()
    {
        // A current-thread runtime's jobs may be woken by other threads at any time: it waits.
        using var runtime = new CurrentThreadRuntime();
        var channel = Chan.Unbuffered<int>();
        _ = Task.Run(async () =>
        {
            await Task.Delay(300);
            await channel.SendAsync(4).AsTask();
        });
        Assert.Equal(4, Bounded.Run(runtime, async () => await channel.ReceiveAsync()));
    }

    private static async Job ReceiverJob(Chan<int> channel) => await channel.ReceiveAsync();

    private static async Job SenderJob(Chan<string> channel) => await channel.SendAsync("x");

    private static async Job LockerJob(JobMutex mutex)
    {
        using JobMutex.Releaser held = await mutex.LockAsync();
    }

    private static async Job GroupWaiterJob(WaitGroup group) => await group.WaitAsync();

    private static async Job PromiseJob(Promise<int> promise) => await promise.Job;
}
