using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>Experiment E4: zero bytes for synchronous completion and for pooled suspends in steady state.</summary>
[Collection(HeavyCollection.Name)]
public class AllocationTests
{
    private const int Iterations = 10_000;

    private static async Job<int> AddSync(int x) => x + 1;

    private static async Job<int> AwaitOnce(Job<int> source) => await source + 1;

    [Fact]
    public void SyncCompletingJob_AllocatesNothing()
    {
        long bytes = TestHelpers.SteadyStateAllocations(() =>
        {
            int sum = 0;
            for (int i = 0; i < Iterations; i++)
            {
                sum += AddSync(i).Wait();
            }

            Assert.True(sum > 0);
        });
        Assert.Equal(0, bytes);
    }

    [Fact]
    public void SuspendResumeHop_AllocatesNothingInSteadyState()
    {
        long bytes = TestHelpers.SteadyStateAllocations(() =>
        {
            for (int i = 0; i < Iterations; i++)
            {
                PooledBox<int> cell = PooledBox<int>.Rent();
                Job<int> job = AwaitOnce(new Job<int>(cell, cell.Version));
                cell.SetResult(i);
                if (job.Wait() != i + 1)
                {
                    throw new InvalidOperationException("wrong result"); // (xunit's Assert.Equal allocates)
                }
            }
        });
        Assert.Equal(0, bytes);
    }

    /// <summary>A non-Myriad awaiter that reports "not completed" and then runs its continuation at once.</summary>
    private readonly struct ForeignInlineAwaitable : System.Runtime.CompilerServices.ICriticalNotifyCompletion
    {
        public ForeignInlineAwaitable GetAwaiter() => this;

        public bool IsCompleted => false;

        public void GetResult()
        {
        }

        public void OnCompleted(Action continuation) => continuation();

        public void UnsafeOnCompleted(Action continuation) => continuation();
    }

    /// <summary>A non-Myriad awaiter whose continuation runs on another thread (as a Task's does on the thread pool).</summary>
    private readonly struct CompletedElsewhere(OtherThread completer) : System.Runtime.CompilerServices.ICriticalNotifyCompletion
    {
        public CompletedElsewhere GetAwaiter() => this;

        public bool IsCompleted => false;

        public void GetResult()
        {
        }

        public void OnCompleted(Action continuation) => completer.Post(continuation);

        public void UnsafeOnCompleted(Action continuation) => completer.Post(continuation);
    }

    /// <summary>
    /// Runs each posted continuation on a fresh thread (started and joined by a dedicated thread, so
    /// that the posting thread allocates nothing): whatever a continuation returns to its thread's
    /// pool is lost with that thread, as it would be stranded on a thread-pool thread.
    /// </summary>
    private sealed class OtherThread : IDisposable
    {
        private readonly SemaphoreSlim _signal = new(0);
        private readonly Thread _thread;
        private Action? _pending;
        private volatile bool _stop;

        public OtherThread()
        {
            _thread = new Thread(Loop) { IsBackground = true, Name = "allocation-test completer" };
            _thread.Start();
        }

        public void Post(Action continuation)
        {
            Volatile.Write(ref _pending, continuation);
            _signal.Release();
        }

        public void Dispose()
        {
            _stop = true;
            _signal.Release();
            _thread.Join();
        }

        private void Loop()
        {
            while (true)
            {
                _signal.Wait();
                if (_stop)
                {
                    return;
                }

                var runner = new Thread(static c => ((Action)c!)());
                runner.Start(Interlocked.Exchange(ref _pending, null));
                runner.Join();
            }
        }
    }

    private static async Job<int> AwaitForeign(int x)
    {
        await default(ForeignInlineAwaitable);
        return x + 1;
    }

    private static async Job<int> AwaitForeignTwice(OtherThread completer, int x)
    {
        await new CompletedElsewhere(completer);
        await new CompletedElsewhere(completer);
        return x + 1;
    }

    [Fact]
    public void SuspendOnForeignAwaiter_CompletedOnAnotherThread_AllocatesNothingOnTheStartingThread()
    {
        // The job starts here and is resumed on the other thread; its result is consumed here. What
        // the suspension rents here must come back here, not to the completing thread's pool.
        // On a plain thread: a thread-pool thread whose wait sleeps allocates the task it sleeps on
        // (so that the pool sees it blocked), which is not what this measures.
        using var completer = new OtherThread();
        long bytes = TestHelpers.OnThread(() => TestHelpers.SteadyStateAllocations(() =>
        {
            for (int i = 0; i < 64; i++)
            {
                if (AwaitForeignTwice(completer, i).Wait() != i + 1)
                {
                    throw new InvalidOperationException("wrong result");
                }
            }
        }));
        Assert.Equal(0, bytes);
    }

    [Fact]
    public void SuspendOnInlineForeignAwaiter_OnPlainThread_AllocatesNothingInSteadyState()
    {
        long bytes = TestHelpers.SteadyStateAllocations(() =>
        {
            for (int i = 0; i < Iterations; i++)
            {
                if (AwaitForeign(i).Wait() != i + 1)
                {
                    throw new InvalidOperationException("wrong result");
                }
            }
        });
        Assert.Equal(0, bytes);
    }

    [Fact]
    public void SuspendOnInlineForeignAwaiter_OnWorker_AllocatesNothingInSteadyState()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        long bytes = runtime.Run(static () => SteadyState.AllocatedBytesAsync(
            static async n =>
            {
                for (int i = 0; i < n; i++)
                {
                    if (await AwaitForeign(i) != i + 1)
                    {
                        throw new InvalidOperationException("wrong result");
                    }
                }
            },
            Iterations));
        Assert.Equal(0, bytes);
    }

    private struct Pair
    {
        public long A;
        public long B;
    }

    [Fact]
    public void SpawnWithStructState_FromWorker_AllocatesNothingInSteadyState()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        long bytes = runtime.Run(runtime, static async rt =>
        {
            static async Job<long> Loop(JobRuntime rt)
            {
                long sum = 0;
                for (int i = 0; i < Iterations; i++)
                {
                    sum += await rt.Spawn(new Pair { A = i, B = 1 }, static p => Job.FromResult(p.A + p.B));
                }

                return sum;
            }

            long best = long.MaxValue;
            for (int attempt = 0; attempt < 8 && best > 0; attempt++)
            {
                await Loop(rt);
                // Measure on whichever worker we are on now; each spawn completes on a worker too,
                // so the loop's own thread sees every rent and release.
                long before = GC.GetAllocatedBytesForCurrentThread();
                int thread = Environment.CurrentManagedThreadId;
                await Loop(rt);
                if (thread == Environment.CurrentManagedThreadId)
                {
                    best = Math.Min(best, GC.GetAllocatedBytesForCurrentThread() - before);
                }

                if (best > 0)
                {
                    System.Threading.Thread.Sleep(150);
                }
            }

            return best;
        });

        // A handful of bytes may come from one-off work (a pool's first per-thread stack) inside the
        // measured window; "0 B amortized" means less than one byte per spawn.
        Assert.InRange(bytes, 0, Iterations - 1);
    }

    [Fact]
    public void PendingJob_BoxIsAtMost120Bytes() => Assert.InRange(PendingLinkBytes(static tail => AwaitOnce(tail)), 1, 120);

    /// <summary>
    /// Bytes per pending job in a chain of 20,000 links made by <paramref name="link"/>, the lowest
    /// of several attempts (tiered compilation must catch up first).
    /// </summary>
    private static long PendingLinkBytes(Func<Job<int>, Job<int>> link)
    {
        const int count = 20_000;
        long best = long.MaxValue;
        for (int attempt = 0; attempt < 8; attempt++)
        {
            var head = new Promise<int>();
            long before = GC.GetAllocatedBytesForCurrentThread();
            Job<int> tail = head.Job;
            for (int i = 0; i < count; i++)
            {
                tail = link(tail);
            }

            best = Math.Min(best, (GC.GetAllocatedBytesForCurrentThread() - before) / count);
            head.SetResult(0);
            Assert.Equal(count, tail.Wait());
            System.Threading.Thread.Sleep(100); // let tiered compilation install the optimized code
        }

        return best;
    }

    private static async Job<int> AwaitForeignThenJob(Job<int> source)
    {
        await default(ForeignInlineAwaitable);
        return await source + 1;
    }

    [Fact]
    public void PendingJob_AfterATaskAwait_CarriesNothingForIt()
    {
        // What a Task await attaches to the box goes back to the pool when the job next awaits a
        // job, so a job pending on a job is the bare box, even after a Task await.
        Assert.InRange(PendingLinkBytes(static tail => AwaitForeignThenJob(tail)), 1, 120);
    }

    private static async Job<int> FailAfterForeign()
    {
        await default(ForeignInlineAwaitable);
        throw new InvalidOperationException("planned failure");
    }

    [Fact]
    public void FailingJob_AfterATaskAwait_ReturnsWhatTheAwaitAttachedToThePool()
    {
        // The error takes the box's _aux slot, where the Task await attached its ForeignAwait. That
        // object must go back to the failing thread's pool (the next Task await there rents it),
        // not to the GC. A fresh thread starts with an empty pool of its own.
        long rentBytes = -1;
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                Job<int> job = FailAfterForeign();
                failure = Record.Exception(() => job.Wait());
                PerThread state = PerThread.Current;
                long before = GC.GetAllocatedBytesForCurrentThread();
                ForeignAwait foreign = ForeignAwait.Rent(state, null!);
                rentBytes = GC.GetAllocatedBytesForCurrentThread() - before;
                foreign.Return(state);
            }
            catch (Exception e)
            {
                failure = new InvalidOperationException("the test thread failed", e);
            }
        });
        thread.Start();
        Assert.True(thread.Join(TimeSpan.FromSeconds(30)), "the test thread hung");
        Assert.Equal("planned failure", Assert.IsType<InvalidOperationException>(failure).Message);
        Assert.Equal(0, rentBytes);
    }
}
