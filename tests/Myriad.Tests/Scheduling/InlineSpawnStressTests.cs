using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// Spawns started at once under a tiny backlog, on two workers and from a waiting thread, while the
/// jobs they start suspend and are resumed on other threads: the spawner's mark on a suspended body's
/// job (or the spawn box that adopts it) races that job's completion, the awaiter's registration
/// races it too, and queued spawns race thieves. Every result must
/// arrive exactly once and every spawn must count as completed.
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public class InlineSpawnStressTests
{
    private const int Spawns = 100_000;

    private static MultiThreadRuntime Runtime(int backlog) =>
        new(new RuntimeOptions { WorkerCount = 2, LocalQueueCapacity = 4, SpawnInlineBacklog = backlog });

    /// <summary>A child that sometimes suspends: on a Task (resumed from the thread pool) or on a yield.</summary>
    private static async Job<long> Child(long value)
    {
        switch (value % 3)
        {
            case 0:
                await Task.Yield();
                break;
            case 1:
                await Job.Yield();
                break;
        }

        return value;
    }

    /// <summary>The children's values 0..Spawns-1 summed once each; the children and the parent counted as spawned and, eventually, completed.</summary>
    private static void AssertEveryResultOnceAndEverySpawnCounted(MultiThreadRuntime runtime, long sum)
    {
        Assert.Equal((long)Spawns * (Spawns - 1) / 2, sum);
        Assert.Equal(Spawns + 1, runtime.SpawnedCount);
        Assert.True(SpinWait.SpinUntil(() => runtime.CompletedCount == runtime.SpawnedCount, TestHelpers.DefaultTimeout));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    public async Task Spawn_ManyUnderATinyBacklog_EveryResultOnceAndEverySpawnCounted(int backlog)
    {
        using MultiThreadRuntime runtime = Runtime(backlog);
        long sum = await runtime.Spawn(runtime, static async rt =>
        {
            var jobs = new Job<long>[Spawns];
            for (int i = 0; i < Spawns; i++)
            {
                jobs[i] = rt.Spawn((long)i, static v => Child(v));
            }

            long total = 0;
            foreach (Job<long> job in jobs)
            {
                total += await job;
            }

            return total;
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);

        AssertEveryResultOnceAndEverySpawnCounted(runtime, sum);
    }

    [Fact]
    public async Task Spawn_PairsAwaitedAtOnce_RegistrationRacesTheCompletionAndEverySpawnCounts()
    {
        // The first spawn of each pair queues (and keeps the backlog of one), the second starts at
        // once and suspends, and the spawner awaits it at once: its registration on the marked job
        // races the job's resume and completion on the other worker.
        using MultiThreadRuntime runtime = Runtime(backlog: 1);
        long sum = await runtime.Spawn(runtime, static async rt =>
        {
            long total = 0;
            for (int i = 0; i < Spawns; i += 2)
            {
                Job<long> queued = rt.Spawn((long)i, static v => Child(v));
                Job<long> started = rt.Spawn((long)i + 1, static v => Child(v));
                total += await started;
                total += await queued;
            }

            return total;
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);

        AssertEveryResultOnceAndEverySpawnCounted(runtime, sum);
    }

    [Fact]
    public void Await_MarkedJobAwaitedTwiceAtOnce_OneRegistrationRefusedAndTheEndStillCounted()
    {
        // Two plain threads register on the same inline-started, pending job at once (a misuse):
        // one is refused, and the loser must not take back the count the winner passed on.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, SpawnInlineBacklog = 1 });
        const int Rounds = 3000;
        int refused = 0;
        for (int round = 0; round < Rounds; round++)
        {
            var gate = new TaskCompletionSource<int>();
            Job<int> child = runtime.Spawn((runtime, gate), static async s =>
            {
                s.runtime.SpawnDetached(static () => { }); // the backlog of one
                return s.runtime.Spawn(s.gate, static async g => await g.Task);
            }).AsTask().GetAwaiter().GetResult();

            int start = 0;
            void Register()
            {
                while (Volatile.Read(ref start) == 0)
                {
                }

                try
                {
                    child.GetAwaiter().UnsafeOnCompleted(static () => { });
                }
                catch (InvalidOperationException)
                {
                    Interlocked.Increment(ref refused);
                }
            }

            var other = new Thread(Register);
            other.Start();
            Volatile.Write(ref start, 1);
            Register();
            other.Join();
            gate.SetResult(round);
        }

        Assert.Equal(Rounds, refused);
        Assert.True(SpinWait.SpinUntil(() => runtime.CompletedCount == runtime.SpawnedCount, TestHelpers.DefaultTimeout), $"spawned {runtime.SpawnedCount}, completed {runtime.CompletedCount}");
    }

    [Fact]
    public void SpawnDetached_ManyFromTwoWorkersAndAWaitingThread_EveryBodyRunsOnce()
    {
        using MultiThreadRuntime runtime = Runtime(backlog: 2);
        var ran = new int[Spawns];
        var all = new Myriad.Coordination.WaitGroup();
        all.Add(Spawns);

        // Three spawners at once: the waiting thread (a guest: its spawns go to the global queue)
        // and two spawned jobs on the workers, each taking every third index.
        TestThread guest = TestThread.Start(() => runtime.Run((runtime, ran, all), static s =>
        {
            s.runtime.SpawnDetached(s, static s => SpawnEvery(s.runtime, s.ran, s.all, 1));
            s.runtime.SpawnDetached(s, static s => SpawnEvery(s.runtime, s.ran, s.all, 2));
            SpawnEvery(s.runtime, s.ran, s.all, 0);
            return s.all.WaitAsync();
        }, CancellationToken.None), "guest");
        Assert.True(guest.Join(TestHelpers.DefaultTimeout));
        Assert.All(ran, r => Assert.Equal(1, r));
        Assert.True(SpinWait.SpinUntil(() => runtime.CompletedCount == runtime.SpawnedCount, TestHelpers.DefaultTimeout));

        static void SpawnEvery(JobRuntime runtime, int[] ran, Myriad.Coordination.WaitGroup all, int offset)
        {
            for (int i = offset; i < Spawns; i += 3)
            {
                runtime.SpawnDetached((ran, i, all), static async c =>
                {
                    if ((c.i & 1) == 0)
                    {
                        await Task.Yield();
                    }

                    Interlocked.Increment(ref c.ran[c.i]);
                    c.all.Done();
                });
            }
        }
    }
}
