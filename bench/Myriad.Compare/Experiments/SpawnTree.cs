using System;
using System.Threading.Tasks;
using Myriad.Scheduling;

namespace Myriad.Compare.Experiments;

/// <summary>
/// A 10-ary spawn tree over N leaves: every node spawns one child per tenth of its range and awaits
/// them in order; a leaf (a range of one) returns its number. The result is the sum 0..N-1.
/// </summary>
internal static class SpawnTree
{
    /// <summary>Children per node: a range is split into this many parts (fewer when it is shorter).</summary>
    public const int FanOut = 10;

    public static long Expected(Case c) => c.N * (c.N - 1) / 2;

    /// <summary><c>runtime.Spawn((runtime, lo, count), static s => Node(...))</c> per child, the root inside <c>runtime.Run</c>.</summary>
    public static long Myriad(Case c)
    {
        MultiThreadRuntime runtime = Hosts.Runtime;
        return runtime.Run((runtime, c.N), static s => MyriadNode(s.runtime, 0, s.N));
    }

    /// <summary><c>Task.Run(() => Node(lo, count))</c> per child, the root on the thread pool.</summary>
    public static long Tpl(Case c) => Task.Run(() => TplNode(0, c.N)).GetAwaiter().GetResult();

    private static async Job<long> MyriadNode(JobRuntime runtime, long lo, long count)
    {
        if (count == 1)
        {
            return lo;
        }

        int parts = (int)Math.Min(FanOut, count);
        var children = new Job<long>[parts];
        for (int i = 0; i < parts; i++)
        {
            (long start, long size) = Part(lo, count, parts, i);
            children[i] = runtime.Spawn((runtime, start, size), static s => MyriadNode(s.runtime, s.start, s.size));
        }

        long sum = 0;
        foreach (Job<long> child in children)
        {
            sum += await child;
        }

        return sum;
    }

    private static async Task<long> TplNode(long lo, long count)
    {
        if (count == 1)
        {
            return lo;
        }

        int parts = (int)Math.Min(FanOut, count);
        var children = new Task<long>[parts];
        for (int i = 0; i < parts; i++)
        {
            (long start, long size) = Part(lo, count, parts, i);
            children[i] = Task.Run(() => TplNode(start, size));
        }

        long sum = 0;
        foreach (Task<long> child in children)
        {
            sum += await child;
        }

        return sum;
    }

    /// <summary>The i-th of <paramref name="parts"/> near-equal sub-ranges of [lo, lo + count).</summary>
    private static (long Start, long Size) Part(long lo, long count, int parts, int i)
    {
        long start = lo + (count * i / parts);
        long end = lo + (count * (i + 1) / parts);
        return (start, end - start);
    }
}
