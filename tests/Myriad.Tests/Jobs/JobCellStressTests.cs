using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Jobs;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// Races on the lock-free protocols of the job machinery: completion against registration on a
/// cell, rent/return on the box pool's shared slots, and the claim of a spawned job between a
/// worker and a waiter.
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public class JobCellStressTests
{
    private sealed class CountingContinuation : WorkItem
    {
        public int Runs;

        internal override void Execute(Myriad.Internal.PerThread state) => Interlocked.Increment(ref Runs);
    }

    [Fact]
    public void CompleteVersusRegister_ContinuationRunsExactlyOnce()
    {
        const int rounds = 200_000;
        var cells = new PooledBox<int>[rounds];
        var continuations = new CountingContinuation[rounds];
        for (int i = 0; i < rounds; i++)
        {
            cells[i] = new PooledBox<int>();
            continuations[i] = new CountingContinuation();
        }

        using var start = new Barrier(2);
        var completer = new Thread(() =>
        {
            start.SignalAndWait();
            for (int i = 0; i < rounds; i++)
            {
                cells[i].SetResult(i);
            }
        });
        completer.Start();
        TestHelpers.OnThread(() =>
        {
            start.SignalAndWait();
            for (int i = 0; i < rounds; i++)
            {
                cells[i].OnCompleted(continuations[i], cells[i].Version);
            }
        });
        Assert.True(completer.Join(TimeSpan.FromSeconds(60)));
        for (int i = 0; i < rounds; i++)
        {
            Assert.True(continuations[i].Runs == 1, $"round {i}: continuation ran {continuations[i].Runs} times");
            Assert.Equal(i, cells[i].GetResult(cells[i].Version));
        }
    }

    private sealed class Token
    {
        public int Owners;
    }

    [Fact]
    public void BoxPool_RentReturnFromManyThreads_NeverHandsAnItemToTwoOwners()
    {
        const int threads = 4;
        const int iterations = 200_000;
        int violations = 0;
        Parallel.For(0, threads, new ParallelOptions { MaxDegreeOfParallelism = threads }, _ =>
        {
            var held = new List<Token>(4);
            for (int i = 0; i < iterations; i++)
            {
                Token token = BoxPool<Token>.Shared.Rent() ?? new Token();
                if (Interlocked.Increment(ref token.Owners) != 1)
                {
                    Interlocked.Increment(ref violations);
                }

                held.Add(token);
                if (held.Count == 4 || (i & 1) == 0)
                {
                    foreach (Token t in held)
                    {
                        Interlocked.Decrement(ref t.Owners);
                        BoxPool<Token>.Shared.Return(t);
                    }

                    held.Clear();
                }
            }
        });
        Assert.Equal(0, violations);
    }

    [Fact]
    public void SpawnClaim_WorkerVersusWaiter_BodyRunsExactlyOnce()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, LazyWakeDelay = TimeSpan.Zero });
        const int rounds = 100_000;
        var runs = new int[rounds];
        TestHelpers.OnThread(() =>
        {
            for (int i = 0; i < rounds; i++)
            {
                // With the wake delay at zero, a worker is woken for every spawn and races the
                // waiter for the claim.
                runtime.Spawn((runs, i), static s => Interlocked.Increment(ref s.runs[s.i])).Wait();
            }
        }, timeout: TimeSpan.FromSeconds(120));
        Assert.All(runs, r => Assert.Equal(1, r));
    }
}
