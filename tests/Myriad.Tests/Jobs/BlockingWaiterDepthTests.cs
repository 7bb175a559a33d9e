using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// Blocking waits nested in the work that outer blocking waits run on the same thread: each adds
/// frames, and past the stack's reserve a wait stops helping (multi-threaded runtime) or throws
/// (single-threaded runtime) instead of overflowing the stack, which would end the process.
/// The threads get small stacks, so a few thousand waits go far past what one stack holds.
/// </summary>
public class BlockingWaiterDepthTests
{
    private const int SmallStack = 256 << 10;

    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    private static MultiThreadRuntime NewSmallStackRuntime(int workers = 2) =>
        new(new RuntimeOptions { WorkerCount = workers, ThreadStackSize = SmallStack });

    [Fact]
    public void Wait_ThousandsOfJobsBlockedOnPromisesOnOneRuntime_EveryJobReturns()
    {
        // Default stacks: a few hundred thousand bytes of frames fit on each, so a handful of
        // threads hold them all (on small stacks, a slow tier-0 run could need more threads than
        // the spare limit, and then the deepest waits are refused).
        const int Count = 20_000;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Promise<int>[] promises = Enumerable.Range(0, Count).Select(_ => new Promise<int>()).ToArray();
        var started = new StrongBox(0);
        Job<int>[] jobs = promises
            .Select(p => runtime.Spawn((p, started), static s =>
            {
                Interlocked.Increment(ref s.started.Value);
                return Job.FromResult(s.p.Job.Wait());
            }))
            .ToArray();

        // Every body starts and blocks, nested on a worker's or a spare's stack, before any promise is set.
        Assert.True(SpinWait.SpinUntil(() => Volatile.Read(ref started.Value) == Count, Timeout), $"{Volatile.Read(ref started.Value)} of {Count} bodies started");
        foreach (Promise<int> promise in promises)
        {
            promise.SetResult(1);
        }

        Task<int> sum = Task.Run(() => jobs.Sum(j => j.Wait()));
        Assert.True(sum.Wait(Timeout), "the waits never returned");
        Assert.Equal(Count, sum.Result);
    }

    private static int SpawnAndWait(JobRuntime runtime, int depth) =>
        depth == 0 ? 0 : 1 + runtime.Spawn((runtime, depth), static s => Job.FromResult(SpawnAndWait(s.runtime, s.depth - 1))).Wait();

    [Fact]
    public void Wait_RecursiveSpawnAndWaitDeeperThanAThreadsStack_Returns()
    {
        // The levels run on the pool thread that calls Run, then on the workers and spare threads,
        // several thousand on each (default stacks, as in the test above).
        const int Depth = 20_000;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Task<int> result = Task.Run(() => runtime.Run((runtime, Depth), static s => Job.FromResult(SpawnAndWait(s.runtime, s.Depth))));
        Assert.True(result.Wait(Timeout), "the recursion never returned");
        Assert.Equal(Depth, result.Result);
    }

    [Fact]
    public void Wait_RecursionDeeperThanTheSpareThreadsCanHold_ThrowsInsufficientExecutionStack()
    {
        // With the spare threads all in use, blocking one more thread could leave the job it waits
        // for with nobody to run it: the wait throws instead of hanging.
        const int Depth = 20_000;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, ThreadStackSize = SmallStack, MaxSpareThreads = 2 });
        Task<int> result = Task.Run(() => runtime.Run((runtime, Depth), static s => Job.FromResult(SpawnAndWait(s.runtime, s.Depth))));
        Assert.True(((IAsyncResult)result).AsyncWaitHandle.WaitOne(Timeout), "the recursion never ended");
        AggregateException error = Assert.Throws<AggregateException>(() => result.Wait());
        Assert.IsType<InsufficientExecutionStackException>(error.GetBaseException());
    }

    [Fact]
    public void Wait_OutermostOnAWorkerWithTheSmallestStack_RunsTheJobInline()
    {
        // Less than the stack's reserve from the start: the first wait still runs the spawned job
        // itself (with no spare threads and one worker, nobody else could).
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, ThreadStackSize = RuntimeOptions.MinThreadStackSize, MaxSpareThreads = 0 });
        Task<int> result = Task.Run(() => runtime.Run(runtime, static r => Job.FromResult(r.Spawn(41, static n => Job.FromResult(n + 1)).Wait())));
        Assert.True(result.Wait(Timeout), "the wait never returned");
        Assert.Equal(42, result.Result);
    }

    [Fact]
    public void Wait_NestedOnAWorkerWithTheSmallestStack_StillHelps()
    {
        // TryEnsureSufficientExecutionStack keeps about 128 KiB, the whole of this stack: judged by
        // it, every nested wait here stopped helping and, with no spare thread allowed, threw.
        const int Depth = 30;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, ThreadStackSize = RuntimeOptions.MinThreadStackSize, MaxSpareThreads = 0 });
        // AsTask: a blocking wait on the job itself would run it on the waiting pool thread.
        Task<int> result = runtime.Spawn(runtime, static r => Job.FromResult(r.Spawn(r, static r2 => Job.FromResult(SpawnAndWait(r2, Depth))).Wait())).AsTask();
        Assert.True(((IAsyncResult)result).AsyncWaitHandle.WaitOne(Timeout), "the waits never returned");
        Assert.Equal(Depth, result.Result);
    }

    [Fact]
    public void Wait_ChainOfJobsOfNoRuntimeDeferredPastTheStack_DeepWaitsThrowInsteadOfOverflowing()
    {
        // Each job resumes the next, then blocks: past the trampoline's inline depth the next ones
        // are deferred to this thread's own queue, which the blocked wait runs nested on its frame.
        const int Count = 20_000;
        var probe = new ChainProbe(Count);
        TestHelpers.OnThread(
            () =>
            {
                for (int i = 0; i < Count; i++)
                {
                    _ = Chain(probe, i);
                }

                TestThread setter = TestThread.Start(
                    () =>
                    {
                        // The last job waits with nothing deferred left and blocks, with the few
                        // it resumed inline still above it: not every job can reach its wait before
                        // the blocks are set. Set them once some waits were refused and the rest
                        // stopped moving; set earlier, the later waits just return at once.
                        Assert.True(SpinWait.SpinUntil(() => Volatile.Read(ref probe.TooDeep) > 0, Timeout), "no wait was refused");
                        int entered;
                        do
                        {
                            entered = Volatile.Read(ref probe.Entered);
                            Thread.Sleep(100);
                        }
                        while (entered != Volatile.Read(ref probe.Entered));

                        for (int i = Count - 1; i >= 0; i--)
                        {
                            probe.Blocks[i].SetResult(0);
                        }
                    },
                    "setter");
                probe.Starts[0].SetResult(0);
                Assert.True(setter.Join(Timeout));
            },
            stackSize: 1 << 20,
            timeout: Timeout);

        Assert.Equal(Count, probe.Finished + probe.TooDeep);
        Assert.True(probe.TooDeep > 0, "no wait was refused: the stack held them all, so the test proves nothing");
        Assert.True(probe.Finished > 0, "every wait was refused");
    }

    [Fact]
    public void Wait_ChainOfJobsOfNoRuntimeWaitingForAnotherRuntimesJobs_BlocksWithoutOverflowing()
    {
        // The same chain, each job waiting for a job of a multi-threaded runtime: past the reserve a
        // wait blocks (that runtime completes the job) and must not run this thread's deferred
        // queue nested on its frame, which overflowed the stack at 2,000 jobs.
        const int Count = 20_000;
        var probe = new ChainProbe(Count);
        using MultiThreadRuntime runtime = NewSmallStackRuntime();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        probe.Others = Enumerable.Range(0, Count).Select(_ => runtime.Spawn(gate.Task, static async g => await g)).ToArray();
        TestHelpers.OnThread(
            () =>
            {
                for (int i = 0; i < Count; i++)
                {
                    _ = Chain(probe, i);
                }

                TestThread opener = TestThread.Start(
                    () =>
                    {
                        int entered;
                        do
                        {
                            entered = Volatile.Read(ref probe.Entered);
                            Thread.Sleep(100);
                        }
                        while (entered == 0 || entered != Volatile.Read(ref probe.Entered));

                        gate.SetResult();
                    },
                    "opener");
                probe.Starts[0].SetResult(0);
                Assert.True(opener.Join(Timeout));
            },
            stackSize: 1 << 20,
            timeout: Timeout);

        Assert.True(SpinWait.SpinUntil(() => Volatile.Read(ref probe.Finished) + Volatile.Read(ref probe.TooDeep) == Count, Timeout), $"{probe.Finished} finished, {probe.TooDeep} refused");
        Assert.Equal(0, probe.TooDeep);
    }

    private static async Job Chain(ChainProbe probe, int index)
    {
        await probe.Starts[index].Job;
        probe.Starts[index + 1].SetResult(0);
        Interlocked.Increment(ref probe.Entered);
        try
        {
            if (probe.Others is { } others)
            {
                others[index].Wait();
            }
            else
            {
                probe.Blocks[index].Job.Wait();
            }

            Interlocked.Increment(ref probe.Finished);
        }
        catch (InsufficientExecutionStackException)
        {
            Interlocked.Increment(ref probe.TooDeep);
        }
    }

    private sealed class ChainProbe(int count)
    {
        public readonly Promise<int>[] Starts = Enumerable.Range(0, count + 1).Select(_ => new Promise<int>()).ToArray();
        public readonly Promise<int>[] Blocks = Enumerable.Range(0, count).Select(_ => new Promise<int>()).ToArray();
        public Job[]? Others;
        public int Entered;
        public int Finished;
        public int TooDeep;
    }

    private static int NestedRun(CurrentThreadRuntime runtime, int depth) =>
        depth == 0 ? 0 : 1 + runtime.Run((runtime, depth), static s => Job.FromResult(NestedRun(s.runtime, s.depth - 1)));

    [Fact]
    public void Run_NestedTooDeepOnASingleThreadedRuntime_ThrowsInsufficientExecutionStack()
    {
        TestHelpers.OnThread(
            () =>
            {
                using var runtime = new CurrentThreadRuntime();
                InsufficientExecutionStackException error = Assert.Throws<InsufficientExecutionStackException>(() => NestedRun(runtime, 100_000));
                Assert.Contains("nested too deeply", error.Message, StringComparison.Ordinal);

                // The runtime still works once the nested frames unwound.
                Assert.Equal(5, runtime.Run(5, static n => Job.FromResult(n)));
            },
            stackSize: SmallStack,
            timeout: Timeout);
    }

    [Fact]
    public void Wait_ManyJobsBlockedOnPromisesOnASingleThreadedRuntime_TheDeepOnesFailInsteadOfOverflowing()
    {
        const int Count = 3000;
        (int ok, int tooDeep) = TestHelpers.OnThread(
            () =>
            {
                using var runtime = new CurrentThreadRuntime();
                Promise<int>[] promises = Enumerable.Range(0, Count).Select(_ => new Promise<int>()).ToArray();
                Task setter = Task.Run(async () =>
                {
                    await Task.Delay(100);
                    foreach (Promise<int> promise in promises)
                    {
                        promise.SetResult(1);
                    }
                });

                (int, int) counts = runtime.Run(promises, static async ps =>
                {
                    JobRuntime runtime = JobRuntime.Current!;
                    Job<int>[] jobs = ps.Select(p => runtime.Spawn(p, static p => Job.FromResult(p.Job.Wait()))).ToArray();
                    int ok = 0, tooDeep = 0;
                    foreach (Job<int> job in jobs)
                    {
                        try
                        {
                            ok += await job;
                        }
                        catch (InsufficientExecutionStackException)
                        {
                            tooDeep++;
                        }
                    }

                    return (ok, tooDeep);
                });
                setter.Wait();
                return counts;
            },
            stackSize: SmallStack,
            timeout: Timeout);

        Assert.Equal(Count, ok + tooDeep);
        Assert.True(ok > 0, "no wait returned");
        Assert.True(tooDeep > 0, "no wait was refused: the stack held them all, so the test proves nothing");
    }

    private sealed class StrongBox(int value)
    {
        public int Value = value;
    }
}
