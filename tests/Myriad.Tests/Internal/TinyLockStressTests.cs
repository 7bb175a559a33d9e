using System.Threading;
using Myriad.Internal;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Internal;

/// <summary>The spin lock under contention: mutual exclusion (no lost update of a plain counter) and progress.</summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class TinyLockStressTests
{
    private sealed class Shared
    {
        public TinyLock Lock;
        public long Counter;
        public int Inside;
        public int Overlaps;
    }

    [Fact]
    public void EnterExit_FourThreadsOnTwoCores_NoUpdateIsLost()
    {
        const int Threads = 4;
        const int PerThread = 500_000;
        var shared = new Shared();
        TestHelpers.OnThread(() =>
        {
            var threads = new Thread[Threads];
            for (int t = 0; t < Threads; t++)
            {
                threads[t] = new Thread(() =>
                {
                    for (int i = 0; i < PerThread; i++)
                    {
                        shared.Lock.Enter();
                        if (Interlocked.Increment(ref shared.Inside) != 1)
                        {
                            shared.Overlaps++;
                        }

                        shared.Counter++; // a plain read-modify-write: only the lock protects it
                        Interlocked.Decrement(ref shared.Inside);
                        shared.Lock.Exit();
                    }
                });
                threads[t].Start();
            }

            foreach (Thread thread in threads)
            {
                thread.Join();
            }
        });

        Assert.Equal(0, shared.Overlaps);
        Assert.Equal((long)Threads * PerThread, shared.Counter);
        Assert.False(shared.Lock.IsHeld);
    }
}
