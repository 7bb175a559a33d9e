using System;
using System.Collections.Generic;
using System.Threading;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Coordination;

public sealed class JobMutexTests
{
    [Fact]
    public void LockAsync_Free_AcquiresAtOnce()
    {
        var mutex = new JobMutex();
        JobMutex.Releaser releaser = Sync.Result(mutex.LockAsync());
        Assert.True(mutex.IsLocked);
        releaser.Dispose();
        Assert.False(mutex.IsLocked);
    }

    [Fact]
    public void LockAsync_Held_WaitersServedInFifoOrder()
    {
        var mutex = new JobMutex();
        JobMutex.Releaser first = Sync.Result(mutex.LockAsync());
        var order = new List<int>();
        var waits = new List<Job<JobMutex.Releaser>>();
        for (int i = 0; i < 5; i++)
        {
            waits.Add(mutex.LockAsync());
        }

        Assert.False(mutex.TryLock(out _));
        first.Dispose();
        for (int i = 0; i < 5; i++)
        {
            Assert.True(waits[i].IsCompleted);
            for (int j = i + 1; j < 5; j++)
            {
                Assert.False(waits[j].IsCompleted); // one holder at a time, in arrival order
            }

            Sync.Result(waits[i]).Dispose();
        }

        Assert.False(mutex.IsLocked);
    }

    [Fact]
    public void Releaser_DisposedTwice_ThrowsAndDoesNotUnlockNextHolder()
    {
        var mutex = new JobMutex();
        JobMutex.Releaser first = Sync.Result(mutex.LockAsync());
        Job<JobMutex.Releaser> second = mutex.LockAsync();
        first.Dispose();
        JobMutex.Releaser secondReleaser = Sync.Result(second);

        Assert.Throws<InvalidOperationException>(() => first.Dispose());
        Assert.True(mutex.IsLocked);
        secondReleaser.Dispose();
        default(JobMutex.Releaser).Dispose(); // the releaser of a failed TryLock does nothing
    }

    [Fact]
    public void LockAsync_CanceledWhileWaiting_NeverAcquires()
    {
        var mutex = new JobMutex();
        JobMutex.Releaser holder = Sync.Result(mutex.LockAsync());
        using var cts = new CancellationTokenSource();
        Job<JobMutex.Releaser> canceled = mutex.LockAsync(cts.Token);
        Job<JobMutex.Releaser> next = mutex.LockAsync();

        cts.Cancel();
        Assert.Throws<OperationCanceledException>(() => canceled.GetAwaiter().GetResult());
        holder.Dispose();

        Sync.Result(next).Dispose();
        Assert.False(mutex.IsLocked);
    }

    [Theory]
    [MemberData(nameof(Runtimes.All), MemberType = typeof(Runtimes))]
    public void LockAsync_ConcurrentIncrements_AreMutuallyExclusive(string runtimeName)
    {
        using JobRuntime runtime = Runtimes.Create(runtimeName);
        var state = new Counter();
        Bounded.Run(runtime, async () =>
        {
            var jobs = new Job[8];
            for (int j = 0; j < jobs.Length; j++)
            {
                jobs[j] = runtime.Spawn(state, static async s =>
                {
                    for (int i = 0; i < 2_000; i++)
                    {
                        using (await s.Mutex.LockAsync())
                        {
                            int seen = s.Value;
                            if (i % 100 == 0)
                            {
                                await Job.Delay(1); // suspend while holding: the others must queue
                            }

                            s.Value = seen + 1; // lost updates if two jobs were inside at once
                        }
                    }
                });
            }

            await Job.WhenAll(jobs);
        });

        Assert.Equal(16_000, state.Value);
    }

    [Fact]
    public void Release_HundredThousandHandOffs_DoNotOverflowTheStack()
    {
        // Every waiter resumes inside the previous holder's release: without the trampoline the
        // hand-off chain would be 100,000 frames deep.
        const int N = 100_000;
        using var runtime = new CurrentThreadRuntime();
        var state = new Counter();
        Bounded.Run(runtime, async () =>
        {
            JobMutex.Releaser first = await state.Mutex.LockAsync();
            var jobs = new Job[N];
            for (int i = 0; i < N; i++)
            {
                jobs[i] = Increment(state);
            }

            first.Dispose();
            await Job.WhenAll(jobs);
        });

        Assert.Equal(N, state.Value);

        static async Job Increment(Counter s)
        {
            using (await s.Mutex.LockAsync())
            {
                s.Value++;
            }
        }
    }

    private sealed class Counter
    {
        public readonly JobMutex Mutex = new();
        public int Value;
    }
}
