using System.Threading;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// The spawn box's registration on its inner job (SpawnBox's protocol, steps 1-4): the box
/// registers itself as the inner job's continuation, and the same <c>Execute</c> entry point is also
/// reached by its queue entry and by stale entries that join helping leaves behind. Here the inner
/// jobs are promises that a plain thread completes while the spawns register, so the completion's
/// dispatch lands in the registration window (poking the box) as often as the machine allows. Every
/// handle must get its own result exactly once, and nothing may hang.
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public class SpawnBoxStressTests
{
    private const int Rounds = 40_000;
    private const int Batch = 16;

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(4)]
    public void Spawn_InnerJobCompletedDuringRegistration_EveryHandleGetsItsResultOnce(int workers)
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = workers });
        var shared = new Shared();
        var completer = new Thread(() =>
        {
            for (int i = 0; i < Rounds; i++)
            {
                var spin = default(SpinWait);
                while (Volatile.Read(ref shared.Released) <= i)
                {
                    spin.SpinOnce(sleep1Threshold: -1);
                }

                shared.Promises[i].SetResult(i);
            }
        })
        { IsBackground = true };
        completer.Start();

        long total = Bounded.Run(runtime, async () =>
        {
            long sum = 0;
            var jobs = new Job<int>[Batch];
            for (int i = 0; i < Rounds; i += Batch)
            {
                for (int j = 0; j < Batch; j++)
                {
                    jobs[j] = runtime.Spawn(shared.Promises[i + j], static p => p.Job);
                }

                Volatile.Write(ref shared.Released, i + Batch); // the completer starts on this batch while its spawns register
                for (int j = 0; j < Batch; j++)
                {
                    sum += await jobs[j];
                }
            }

            return sum;
        });

        Assert.True(completer.Join(Bounded.Limit), "the completer did not finish");
        Assert.Equal((long)Rounds * (Rounds - 1) / 2, total);
    }

    private sealed class Shared
    {
        public readonly Promise<int>[] Promises = CreatePromises();
        public int Released;

        private static Promise<int>[] CreatePromises()
        {
            var promises = new Promise<int>[Rounds];
            for (int i = 0; i < promises.Length; i++)
            {
                promises[i] = new Promise<int>();
            }

            return promises;
        }
    }
}
