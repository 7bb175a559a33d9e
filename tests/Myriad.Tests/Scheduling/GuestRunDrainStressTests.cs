using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// Disposes runtimes while plain threads spawn jobs and wait for them, so that the waiting thread
/// often runs its job itself (a guest run) as the drain starts: whatever the interleaving (the
/// spawn refused, the job run by a worker, run by the guest before, during or after the disposal's
/// start), a job that started runs to its end, and no wait hangs (JobRuntime.EnterGuestRun).
/// </summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class GuestRunDrainStressTests
{
    private const int Rounds = 200;
    private const int Waiters = 3;

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void Dispose_WhilePlainThreadsRunTheJobsTheyWaitFor_EveryStartedJobEnds(int workers)
    {
        var random = new Random(4321 + workers);
        for (int round = 0; round < Rounds; round++)
        {
            var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = workers });
            var counts = new Counts();
            var waiters = new Thread[Waiters];
            for (int w = 0; w < Waiters; w++)
            {
                waiters[w] = new Thread(() => WaitForOwnJobs(runtime, counts)) { IsBackground = true };
                waiters[w].Start();
            }

            Thread.SpinWait(random.Next(20_000));
            runtime.Dispose();
            foreach (Thread waiter in waiters)
            {
                Assert.True(waiter.Join(TimeSpan.FromSeconds(30)), $"round {round}: a waiting thread hung");
            }

            Assert.Equal(0, Volatile.Read(ref counts.CutOff));
            Assert.Equal(Volatile.Read(ref counts.Started), Volatile.Read(ref counts.Finished));
        }
    }

    [Fact]
    public void Dispose_WhileLongLivedThreadsRunJobsOfRuntimeAfterRuntime_EveryStartedJobEnds()
    {
        // The same waiting threads across runtimes: each thread's cached guest slot belongs to the
        // runtime before, so every round registers it again with the new runtime (and a stale slot
        // must never stand in for the new runtime's).
        var random = new Random(8765);
        var go = new SemaphoreSlim(0);
        var done = new SemaphoreSlim(0);
        MultiThreadRuntime? current = null;
        var counts = new Counts();
        bool stop = false;
        var waiters = new Thread[Waiters];
        for (int w = 0; w < Waiters; w++)
        {
            waiters[w] = new Thread(() =>
            {
                while (true)
                {
                    go.Wait();
                    if (Volatile.Read(ref stop))
                    {
                        return;
                    }

                    WaitForOwnJobs(Volatile.Read(ref current)!, counts);
                    done.Release();
                }
            }) { IsBackground = true };
            waiters[w].Start();
        }

        for (int round = 0; round < Rounds; round++)
        {
            var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 + (round % 2) });
            Volatile.Write(ref current, runtime);
            go.Release(Waiters);
            Thread.SpinWait(random.Next(20_000));
            runtime.Dispose();
            for (int w = 0; w < Waiters; w++)
            {
                Assert.True(done.Wait(TimeSpan.FromSeconds(30)), $"round {round}: a waiting thread hung");
            }

            Assert.Equal(0, Volatile.Read(ref counts.CutOff));
            Assert.Equal(Volatile.Read(ref counts.Started), Volatile.Read(ref counts.Finished));
        }

        Volatile.Write(ref stop, true);
        go.Release(Waiters);
    }

    private static void WaitForOwnJobs(MultiThreadRuntime runtime, Counts counts)
    {
        while (true)
        {
            Job job;
            try
            {
                job = runtime.Spawn(counts, static async c =>
                {
                    Interlocked.Increment(ref c.Started);
                    Thread.SpinWait(200);
                    await Task.Yield(); // the rest of the job: queued, so the drain must run it
                    Interlocked.Increment(ref c.Finished);
                });
            }
            catch (ObjectDisposedException)
            {
                return;
            }

            try
            {
                job.Wait();
            }
            catch (OperationCanceledException)
            {
                // Canceled is right only for a job that never started (queued when the drain had
                // ended); one that started must have been allowed to finish.
                Interlocked.Increment(ref counts.Canceled);
            }
            catch (Exception)
            {
                Interlocked.Increment(ref counts.CutOff);
            }
        }
    }

    private sealed class Counts
    {
        public int Started;
        public int Finished;
        public int Canceled;
        public int CutOff;
    }
}
