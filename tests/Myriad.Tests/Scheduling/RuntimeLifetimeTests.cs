using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>Nothing keeps a disposed runtime reachable: not a thread that used it, not the metrics' list of retired runtimes.</summary>
public sealed class RuntimeLifetimeTests
{
    [Fact]
    public void Dispose_AfterADetachedSpawnFromAThreadThatStaysAlive_LeavesTheRuntimeCollectable()
    {
        // A plain thread that spawned while the workers were parked owed the runtime a wake-up and
        // held the runtime itself for that, until its next spawn or wait: forever on a thread that
        // never came back. The metrics' retired list also held the last disposed runtime until a
        // later registration or collection refreshed it.
        AssertCollectableWhileTheThreadLives(SpawnDetachedThenDispose);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Dispose_OfASingleThreadedRuntimeAThreadRanJobsOn_LeavesTheRuntimeCollectable(bool deterministic)
    {
        // Run drives the runtime from the calling thread, and its wait for the job was bound to
        // the runtime's driver; the thread kept that waiter for its next wait, and the runtime with it.
        AssertCollectableWhileTheThreadLives(() => RunThenDispose(deterministic));
    }

    /// <summary>
    /// Runs <paramref name="useAndDispose"/> on a thread that stays alive (as a pool thread would)
    /// while the runtime it disposed is checked for reachability.
    /// </summary>
    private static void AssertCollectableWhileTheThreadLives(Func<WeakReference> useAndDispose)
    {
        WeakReference disposed = null!;
        using var checkedIt = new ManualResetEventSlim();
        var user = new Thread(() =>
        {
            Volatile.Write(ref disposed, useAndDispose());
            checkedIt.Wait();
        });
        user.Start();
        while (Volatile.Read(ref disposed) is null)
        {
            Thread.Sleep(10);
        }

        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        bool alive = disposed.IsAlive;
        checkedIt.Set();
        user.Join();
        Assert.False(alive, "the disposed runtime is still reachable");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference RunThenDispose(bool deterministic)
    {
        JobRuntime runtime = deterministic ? new DeterministicRuntime(seed: 1) : new CurrentThreadRuntime();
        runtime.Run(0, static async _ => await System.Threading.Tasks.Task.Yield());
        runtime.Dispose();
        return new WeakReference(runtime);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference SpawnDetachedThenDispose()
    {
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        Thread.Sleep(50); // the workers park, so the spawn defers its wake-up
        using var ran = new ManualResetEventSlim();
        runtime.SpawnDetached(ran, static r => r.Set());
        ran.Wait();
        runtime.Dispose();
        return new WeakReference(runtime);
    }
}
