using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;

namespace Myriad.Compare.Experiments;

/// <summary>The state every E3 job receives.</summary>
internal struct SpawnState
{
    public long A;
    public long B;
}

/// <summary>
/// E3: N tiny jobs with state {A = k, B = 1} that return A + B, in batches of 1000: spawn the batch,
/// then await each and sum. The spawner runs inside the runtime (thread pool for TPL, a job for Myriad).
/// </summary>
internal static class Spawn
{
    public const int Batch = 1000;

    /// <summary><c>Task.Run(() => s.A + s.B)</c>: a closure and a delegate per spawn.</summary>
    public static long TplRun(Case c) => Task.Run(() => TplRunLoop(c.N)).GetAwaiter().GetResult();

    /// <summary><c>Task.Factory.StartNew(static o => ..., (object)state, None, DenyChildAttach, Default)</c>: the state boxes.</summary>
    public static long TplStartNew(Case c) => Task.Run(() => TplStartNewLoop(c.N)).GetAwaiter().GetResult();

    /// <summary><c>runtime.Spawn(state, static s => ...)</c> from inside a job: typed state, no closure.</summary>
    public static long Myriad(Case c) => Hosts.Runtime.Run((Hosts.Runtime, c.N), static s => MyriadLoop(s.Item1, s.Item2));

    private static async Task<long> TplRunLoop(long n)
    {
        var tasks = new Task<long>[Batch];
        long sum = 0;
        for (long start = 0; start < n; start += Batch)
        {
            int size = (int)Math.Min(Batch, n - start);
            for (int i = 0; i < size; i++)
            {
                SpawnState s = new() { A = start + i, B = 1 };
                tasks[i] = Task.Run(() => s.A + s.B);
            }

            for (int i = 0; i < size; i++)
            {
                sum += await tasks[i];
            }
        }

        return sum;
    }

    private static async Task<long> TplStartNewLoop(long n)
    {
        var tasks = new Task<long>[Batch];
        long sum = 0;
        for (long start = 0; start < n; start += Batch)
        {
            int size = (int)Math.Min(Batch, n - start);
            for (int i = 0; i < size; i++)
            {
                SpawnState s = new() { A = start + i, B = 1 };
                tasks[i] = Task.Factory.StartNew(
                    static o =>
                    {
                        var st = (SpawnState)o!;
                        return st.A + st.B;
                    },
                    s,
                    CancellationToken.None,
                    TaskCreationOptions.DenyChildAttach,
                    TaskScheduler.Default);
            }

            for (int i = 0; i < size; i++)
            {
                sum += await tasks[i];
            }
        }

        return sum;
    }

    private static async Job<long> MyriadLoop(JobRuntime runtime, long n)
    {
        var jobs = new Job<long>[Batch];
        long sum = 0;
        for (long start = 0; start < n; start += Batch)
        {
            int size = (int)Math.Min(Batch, n - start);
            for (int i = 0; i < size; i++)
            {
                jobs[i] = runtime.Spawn(new SpawnState { A = start + i, B = 1 }, static s => new Job<long>(s.A + s.B));
            }

            for (int i = 0; i < size; i++)
            {
                sum += await jobs[i];
            }
        }

        return sum;
    }
}
