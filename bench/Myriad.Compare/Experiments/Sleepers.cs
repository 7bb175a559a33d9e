using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Coordination;
using Myriad.Scheduling;

namespace Myriad.Compare.Experiments;

/// <summary>
/// N sleepers, started one after the other, each sleeps <see cref="Sleep"/> and then signals; the run
/// ends when all have signalled. Every sleeper notes its lateness (wake time - its own due time) in
/// a preallocated array of <see cref="Stopwatch"/> ticks; the result is the number of sleepers that
/// woke and noted it.
/// </summary>
internal static class Sleepers
{
    public static readonly TimeSpan Sleep = TimeSpan.FromSeconds(1);

    /// <summary>Marks a slot no sleeper has written yet.</summary>
    private const long NotWoken = long.MinValue;

    private static readonly long SleepTicks = (long)(Sleep.TotalSeconds * Stopwatch.Frequency);

    /// <summary><c>runtime.SpawnDetached</c> per sleeper: <c>await Job.Delay(1 s)</c>, then <c>WaitGroup.Done()</c>; the spawner awaits <c>WaitAsync</c>.</summary>
    public static long Myriad(Case c)
    {
        long[] late = NewLateness(c.N);
        MultiThreadRuntime runtime = Hosts.Runtime;
        runtime.Run((runtime, late), static s => MyriadSpawnAll(s.runtime, s.late));
        return Count(late);
    }

    /// <summary>A plain <c>async Task</c> per sleeper, started from a thread-pool thread: <c>await Task.Delay(1 s)</c>, then a countdown; the spawner awaits its TaskCompletionSource.</summary>
    public static long Tpl(Case c)
    {
        long[] late = NewLateness(c.N);
        Task.Run(() => TplSpawnAll(late)).GetAwaiter().GetResult();
        return Count(late);
    }

    private static long[] NewLateness(long n)
    {
        long[] late = new long[checked((int)n)];
        Array.Fill(late, NotWoken);
        ChildMetrics.LatenessTicks = late;
        return late;
    }

    private static long Count(long[] late)
    {
        long woken = 0;
        foreach (long l in late)
        {
            if (l != NotWoken)
            {
                woken++;
            }
        }

        return woken;
    }

    private static async Job<int> MyriadSpawnAll(JobRuntime runtime, long[] late)
    {
        var group = new WaitGroup();
        group.Add(late.Length);
        for (int i = 0; i < late.Length; i++)
        {
            runtime.SpawnDetached((late, i, group), static s => MyriadSleeper(s.late, s.i, s.group));
        }

        await group.WaitAsync();
        return late.Length;
    }

    private static async Job MyriadSleeper(long[] late, int index, WaitGroup group)
    {
        long due = Stopwatch.GetTimestamp() + SleepTicks;
        await Job.Delay(Sleep);
        late[index] = Stopwatch.GetTimestamp() - due;
        group.Done();
    }

    private static Task TplSpawnAll(long[] late)
    {
        var all = new Countdown(late.Length);
        for (int i = 0; i < late.Length; i++)
        {
            _ = TplSleeper(late, i, all);
        }

        return all.Task;
    }

    private static async Task TplSleeper(long[] late, int index, Countdown all)
    {
        long due = Stopwatch.GetTimestamp() + SleepTicks;
        await Task.Delay(Sleep);
        late[index] = Stopwatch.GetTimestamp() - due;
        all.Signal();
    }

    /// <summary>The TPL stand-in for a WaitGroup: a counter and a TaskCompletionSource set by the last signal.</summary>
    private sealed class Countdown(int count)
    {
        private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _count = count;

        public Task Task => _done.Task;

        public void Signal()
        {
            if (Interlocked.Decrement(ref _count) == 0)
            {
                _done.SetResult();
            }
        }
    }
}
