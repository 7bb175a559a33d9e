using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;

namespace Myriad.Compare.Experiments;

/// <summary>E2, task form: worker i awaits worker i-1's result and returns it + 1; building the chain is measured.</summary>
internal static class ChainTasks
{
    /// <summary>As published: <c>async Task&lt;int&gt;</c> that starts with <c>await Task.Yield()</c>, driven from a plain thread.</summary>
    public static long Tpl(Case c)
    {
        int n = checked((int)c.N);
        var head = new TaskCompletionSource<int>();
        Task<int> last = head.Task;
        for (int i = 0; i < n; i++)
        {
            last = YieldingWorker(last);
        }

        head.SetResult(0);
        return last.GetAwaiter().GetResult();
    }

    /// <summary>As published: no Task.Yield, the whole chain built and run inside a dedicated 2-thread TaskScheduler.</summary>
    public static long TplScheduler(Case c)
    {
        Task<int> outer = Task.Factory.StartNew(
            static s => BuildPlain((int)s!),
            checked((int)c.N),
            CancellationToken.None,
            TaskCreationOptions.DenyChildAttach,
            Hosts.Dedicated).Unwrap();
        return outer.GetAwaiter().GetResult();
    }

    /// <summary><c>async Job&lt;int&gt;</c> workers chained from a <see cref="Promise{T}"/>, built and run inside the runtime.</summary>
    public static long Myriad(Case c) => Hosts.Runtime.Run(checked((int)c.N), static n => BuildJobs(n));

    /// <summary>As <see cref="Myriad"/>, but every link is spawned: <c>last = runtime.Spawn(last, static p => Link(p))</c>.</summary>
    public static long MyriadSpawn(Case c) => Hosts.Runtime.Run((Hosts.Runtime, checked((int)c.N)), static s => BuildSpawnedJobs(s.Item1, s.Item2));

    private static async Task<int> YieldingWorker(Task<int> previous)
    {
        await Task.Yield();
        return await previous + 1;
    }

    private static async Task<int> PlainWorker(Task<int> previous) => await previous + 1;

    private static Task<int> BuildPlain(int n)
    {
        var head = new TaskCompletionSource<int>();
        Task<int> last = head.Task;
        for (int i = 0; i < n; i++)
        {
            last = PlainWorker(last);
        }

        head.SetResult(0);
        return last;
    }

    private static async Job<int> JobWorker(Job<int> previous) => await previous + 1;

    private static Job<int> BuildJobs(int n)
    {
        var head = new Promise<int>();
        Job<int> last = head.Job;
        for (int i = 0; i < n; i++)
        {
            last = JobWorker(last);
        }

        head.SetResult(0);
        return last;
    }

    private static Job<int> BuildSpawnedJobs(JobRuntime runtime, int n)
    {
        var head = new Promise<int>();
        Job<int> last = head.Job;
        for (int i = 0; i < n; i++)
        {
            last = runtime.Spawn(last, static previous => JobWorker(previous));
        }

        head.SetResult(0);
        return last;
    }
}
