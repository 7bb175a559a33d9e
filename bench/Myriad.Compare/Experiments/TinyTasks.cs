using System.Threading.Tasks;
using Myriad.Scheduling;

namespace Myriad.Compare.Experiments;

/// <summary>
/// E5: N sequential spawn-and-wait operations; each job does W increments of a shared counter (only
/// one job runs at a time, so the counter needs no synchronization). Mode <c>thread</c>: the spawner
/// is a plain thread that blocks on each job (as published); mode <c>runtime</c>: the spawner is
/// itself async code on the runtime and awaits each job.
/// </summary>
internal static class TinyTasks
{
    public const string Thread = "thread";
    public const string InRuntime = "runtime";

    public static long Tpl(Case c) => c.Mode == Thread ? TplThread(c.N, c.Work) : Task.Run(() => TplLoop(c.N, c.Work)).GetAwaiter().GetResult();

    public static long Myriad(Case c)
    {
        MultiThreadRuntime runtime = Hosts.Runtime;
        return c.Mode == Thread ? MyriadThread(runtime, c.N, c.Work) : runtime.Run((runtime, c.N, c.Work), static s => MyriadLoop(s.runtime, s.N, s.Work));
    }

    /// <summary>As published: <c>Task.Run(() => X += 1).GetAwaiter().GetResult()</c> in a loop on a plain thread.</summary>
    private static long TplThread(long n, int work)
    {
        var counter = new Counter();
        for (long i = 0; i < n; i++)
        {
            Task.Run(() =>
            {
                for (int j = 0; j < work; j++)
                {
                    counter.Value++;
                }
            }).GetAwaiter().GetResult();
        }

        return counter.Value;
    }

    private static async Task<long> TplLoop(long n, int work)
    {
        var counter = new Counter();
        for (long i = 0; i < n; i++)
        {
            await Task.Run(() =>
            {
                for (int j = 0; j < work; j++)
                {
                    counter.Value++;
                }
            });
        }

        return counter.Value;
    }

    /// <summary><c>runtime.Spawn(state, static s => ...).Wait()</c> in a loop on a plain thread.</summary>
    private static long MyriadThread(MultiThreadRuntime runtime, long n, int work)
    {
        var counter = new Counter();
        for (long i = 0; i < n; i++)
        {
            runtime.Spawn((counter, work), static s => Increment(s.counter, s.work)).Wait();
        }

        return counter.Value;
    }

    private static async Job<long> MyriadLoop(JobRuntime runtime, long n, int work)
    {
        var counter = new Counter();
        for (long i = 0; i < n; i++)
        {
            await runtime.Spawn((counter, work), static s => Increment(s.counter, s.work));
        }

        return counter.Value;
    }

    private static void Increment(Counter counter, int work)
    {
        for (int j = 0; j < work; j++)
        {
            counter.Value++;
        }
    }

    private sealed class Counter
    {
        public long Value;
    }
}
