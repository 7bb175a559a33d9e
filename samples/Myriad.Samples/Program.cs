using System;
using System.Diagnostics;
using Myriad;
using Myriad.Scheduling;

// A tour of the core: deep recursion, a million chained jobs, and typed spawning.
internal static class Program
{
    private static async Job<long> Count(long n) => n <= 0 ? 0 : 1 + await Count(n - 1);

    private static async Job<int> Link(Job<int> previous) => await previous + 1;

    private readonly record struct Order(int Id, decimal Amount);

    private static void Main()
    {
        var watch = Stopwatch.StartNew();
        Console.WriteLine($"recursion depth 1,000,000 -> {Count(1_000_000).Wait():N0} ({watch.ElapsedMilliseconds} ms)");

        watch.Restart();
        var head = new Promise<int>();
        Job<int> tail = head.Job;
        for (int i = 0; i < 1_000_000; i++)
        {
            tail = Link(tail);
        }

        head.SetResult(0);
        Console.WriteLine($"chain of 1,000,000 jobs -> {tail.Wait():N0} ({watch.ElapsedMilliseconds} ms)");

        using var runtime = new MultiThreadRuntime();
        watch.Restart();
        decimal total = runtime.Run(runtime, static async rt =>
        {
            var handles = new Job<decimal>[10_000];
            for (int i = 0; i < handles.Length; i++)
            {
                // Typed state, static lambda: no closure, no boxing of the struct.
                handles[i] = rt.Spawn(new Order(i, 1.5m), static o => Job.FromResult(o.Amount * 2));
            }

            decimal sum = 0;
            foreach (Job<decimal> handle in handles)
            {
                sum += await handle;
            }

            return sum;
        });
        Console.WriteLine($"10,000 spawned jobs on {runtime.WorkerCount} workers -> {total} ({watch.ElapsedMilliseconds} ms)");
    }
}
