using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// Disposes runtimes while plain threads spawn jobs and wait for them, so that the waiting thread
/// often runs its job itself (a guest run) as the drain starts: whatever the interleaving (the
/// spawn refused, the job run by a worker, run by the guest before, during or after the disposal's
/// start), a job that started runs to its end, and no wait hangs (JobRuntime.EnterGuestRun).
/// </summary>
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
