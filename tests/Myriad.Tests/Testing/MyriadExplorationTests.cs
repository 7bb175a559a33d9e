using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Coordination;
using Myriad.Scheduling;
using Myriad.Testing;
using Xunit;

namespace Myriad.Tests.Testing;

/// <summary>
/// Myriad's own channels, select, coordination primitives, combinators and timers under the schedule
/// explorer: each property must hold under <see cref="Seeds"/> schedules of each strategy. A failure
/// names the seed and the line that replays it.
/// </summary>
public sealed class MyriadExplorationTests
{
    private const int Seeds = 200;

    public static IEnumerable<object[]> Strategies() => [[ScheduleStrategy.Random], [ScheduleStrategy.Priority]];

    private static void Explore(ScheduleStrategy strategy, Func<DeterministicRuntime, Job> body) =>
        Support.TestHelpers.OnThread(
            () => Assert.Equal(Seeds, ScheduleExplorer.Explore(body, new ExplorationOptions { Seeds = Seeds, Strategy = strategy, PriorityChangePoints = 3 })),
            timeout: TimeSpan.FromSeconds(60));

    [Theory]
    [MemberData(nameof(Strategies))]
    public void Channel_ProducersAndConsumers_DeliverEveryItemOnceAndCloseCleanly(ScheduleStrategy strategy) => Explore(strategy, async runtime =>
    {
        foreach (int capacity in new[] { 0, 1, 3 })
        {
            var channel = Chan.Bounded<int>(capacity);
            var received = new List<int>();
            Job[] producers = Enumerable.Range(0, 3).Select(p => runtime.Spawn(async () =>
            {
                for (int i = 0; i < 4; i++)
                {
                    await channel.SendAsync((p * 10) + i);
                }
            })).ToArray();
            Job[] consumers = Enumerable.Range(0, 2).Select(_ => runtime.Spawn(async () =>
            {
                while (true)
                {
                    (int value, bool ok) = await channel.ReceiveOkAsync();
                    if (!ok)
                    {
                        return;
                    }

                    received.Add(value);
                }
            })).ToArray();

            await Job.WhenAll(producers);
            channel.Close();
            await Job.WhenAll(consumers);

            received.Sort();
            Assert.Equal(Enumerable.Range(0, 3).SelectMany(p => Enumerable.Range(p * 10, 4)), received);
            for (int p = 0; p < 3; p++)
            {
                // Items of one producer arrive in the order it sent them (per consumer, and here overall
                // once sorted by value; checked in full by the ordered test below).
                Assert.Equal(4, received.Count(v => v / 10 == p));
            }
        }
    });

    [Theory]
    [MemberData(nameof(Strategies))]
    public void Channel_OneProducerOneConsumer_KeepsFifoOrder(ScheduleStrategy strategy) => Explore(strategy, async runtime =>
    {
        var channel = Chan.Bounded<int>(2);
        Job producer = runtime.Spawn(async () =>
        {
            for (int i = 0; i < 8; i++)
            {
                await channel.SendAsync(i);
                if (i % 3 == 0)
                {
                    await Task.Yield();
                }
            }

            channel.Close();
        });
        int expected = 0;
        await foreach (int item in channel.ReadAllAsync())
        {
            Assert.Equal(expected++, item);
        }

        Assert.Equal(8, expected);
        await producer;
    });

    [Theory]
    [MemberData(nameof(Strategies))]
    public void Select_SendAndReceiveCases_LoseAndDuplicateNothing(ScheduleStrategy strategy) => Explore(strategy, async runtime =>
    {
        var a = Chan.Unbuffered<int>();
        var b = Chan.Bounded<int>(1);
        var results = Chan.Unbounded<int>();
        int taken = 0;
        Job selector = runtime.Spawn(async () =>
        {
            for (int i = 0; i < 6; i++)
            {
                await Select.Receive(a, v => results.TrySend(v)).Receive(b, v => results.TrySend(v));
                taken++;
            }
        });
        Job sendA = runtime.Spawn(async () =>
        {
            for (int i = 0; i < 3; i++)
            {
                await Select.Send(a, i).Timeout(TimeSpan.FromSeconds(1), () => throw new InvalidOperationException("send on a timed out although a receiver waited"));
            }
        });
        Job sendB = runtime.Spawn(async () =>
        {
            for (int i = 10; i < 13; i++)
            {
                await b.SendAsync(i);
            }
        });
        await Job.WhenAll(selector, sendA, sendB);
        results.Close();
        var got = new List<int>();
        await foreach (int v in results.ReadAllAsync())
        {
            got.Add(v);
        }

        got.Sort();
        Assert.Equal(new[] { 0, 1, 2, 10, 11, 12 }, got);
        Assert.Equal(6, taken);
    });

    [Theory]
    [MemberData(nameof(Strategies))]
    public void Select_RacingCloseAndDefault_NeverHangsOrMisreports(ScheduleStrategy strategy) => Explore(strategy, async runtime =>
    {
        var channel = Chan.Unbuffered<int>();
        int closedSeen = 0;
        int defaults = 0;
        Job closer = runtime.Spawn(async () =>
        {
            await Task.Yield();
            channel.Close();
        });
        while (closedSeen == 0)
        {
            await Select.ReceiveOk(channel, r => closedSeen += r.Ok ? 100 : 1).Default(() => defaults++);
            await Task.Yield();
        }

        Assert.Equal(1, closedSeen); // nothing was ever sent: only the close can complete the receive
        await closer;
    });

    [Theory]
    [MemberData(nameof(Strategies))]
    public void Mutex_Contended_ExcludesMutuallyAndServesEveryone(ScheduleStrategy strategy) => Explore(strategy, async runtime =>
    {
        var mutex = new JobMutex();
        int inside = 0;
        int done = 0;
        Job[] workers = Enumerable.Range(0, 4).Select(_ => runtime.Spawn(async () =>
        {
            for (int i = 0; i < 2; i++)
            {
                using (await mutex.LockAsync())
                {
                    Assert.Equal(1, ++inside);
                    await Task.Yield();
                    inside--;
                }
            }

            done++;
        })).ToArray();
        await Job.WhenAll(workers);
        Assert.Equal(4, done);
    });

    [Theory]
    [MemberData(nameof(Strategies))]
    public void Semaphore_AndWaitGroup_BoundConcurrencyAndReleaseTheWaiter(ScheduleStrategy strategy) => Explore(strategy, async runtime =>
    {
        var semaphore = new JobSemaphore(2);
        var group = new WaitGroup();
        int inside = 0;
        int peak = 0;
        group.Add(5);
        Job[] workers = Enumerable.Range(0, 5).Select(_ => runtime.Spawn(async () =>
        {
            using (await semaphore.AcquireAsync())
            {
                peak = Math.Max(peak, ++inside);
                await Task.Yield();
                inside--;
            }

            group.Done();
        })).ToArray();
        await group.WaitAsync();
        Assert.Equal(0, inside);
        Assert.InRange(peak, 1, 2);
        Assert.Equal(2, semaphore.CurrentCount);
        await Job.WhenAll(workers);
    });

    [Theory]
    [MemberData(nameof(Strategies))]
    public void Combinators_WhenAllAndWhenAny_ReportWhatRaced(ScheduleStrategy strategy) => Explore(strategy, async runtime =>
    {
        Job<int> Worker(int id, int yields) => runtime.Spawn(async () =>
        {
            for (int i = 0; i < yields; i++)
            {
                await Task.Yield();
            }

            return id;
        });

        int[] all = await Job.WhenAll(Worker(0, 2), Worker(1, 0), Worker(2, 3));
        Assert.Equal(new[] { 0, 1, 2 }, all);

        var finished = new List<int>();
        Job<int> Tracked(int id, int yields) => runtime.Spawn(async () =>
        {
            int value = await Worker(id, yields);
            finished.Add(value);
            return value;
        });
        (int index, Job<int> winner) = await Job.WhenAny(Tracked(0, 3), Tracked(1, 1), Tracked(2, 2));
        Assert.Equal(index, await winner);
        // The winner completed; which of the jobs that completed before WhenAny's observers ran
        // wins is the seed's choice (wake-ups are queued steps), as it is the threads' on a
        // multi-thread runtime.
        Assert.Contains(index, finished);

        var failing = runtime.Spawn(async () =>
        {
            await Task.Yield();
            throw new InvalidOperationException("boom");
        });
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await Job.WhenAll(failing, Worker(3, 1).AsJob()));
    });

    [Theory]
    [MemberData(nameof(Strategies))]
    public void Timers_DelaysAndSelectTimeouts_FireInDeadlineOrderOnVirtualTime(ScheduleStrategy strategy) => Explore(strategy, async runtime =>
    {
        var fired = new List<int>();
        DateTimeOffset start = runtime.Now;
        Job[] sleepers = new[] { 30, 10, 20, 10 }.Select((ms, i) => runtime.Spawn(async () =>
        {
            await Job.Delay(TimeSpan.FromMilliseconds(ms));
            Assert.Equal(TimeSpan.FromMilliseconds(ms), runtime.Now - start);
            fired.Add(ms);
        })).ToArray();

        var never = Chan.Unbuffered<int>();
        bool timedOut = false;
        Job waiter = runtime.Spawn(async () =>
        {
            await Select.Receive(never).Timeout(TimeSpan.FromMilliseconds(25), () => timedOut = true);
            Assert.Equal(TimeSpan.FromMilliseconds(25), runtime.Now - start);
        });

        using var cts = new CancellationTokenSource();
        Job canceled = Job.Delay(TimeSpan.FromHours(1), cts.Token);
        await Job.WhenAll(sleepers);
        await waiter;
        cts.Cancel();
        await Assert.ThrowsAsync<OperationCanceledException>(async () => await canceled);

        Assert.True(timedOut);
        Assert.Equal(new[] { 10, 10, 20, 30 }, fired);
        Assert.Equal(TimeSpan.FromMilliseconds(30), runtime.Now - start); // the canceled hour never ran
    });
}
