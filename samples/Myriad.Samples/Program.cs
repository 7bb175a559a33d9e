using System;
using System.Diagnostics;
using Myriad;
using Myriad.Channels;
using Myriad.Scheduling;

// A tour of the core: deep recursion, a million chained jobs, typed spawning, and a channel pipeline.
internal static class Program
{
    private static async Job<long> Count(long n) => n <= 0 ? 0 : 1 + await Count(n - 1);

    private static async Job<int> Link(Job<int> previous) => await previous + 1;

    private readonly record struct Order(int Id, decimal Amount);

    private static async Job Stage(Chan<int> input, Chan<int> output) => await output.SendAsync(await input.ReceiveAsync() + 1);

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

        watch.Restart();
        int last = runtime.Run(runtime, static async rt =>
        {
            // A daisy chain of 100,000 jobs over unbuffered channels. Each stage is started by a
            // direct call (it runs up to its first receive, which parks it in its input channel)
            // and handed to the runtime, which recycles it when it ends and reports its failure.
            Chan<int> first = Chan.Unbuffered<int>();
            Chan<int> input = first;
            for (int i = 0; i < 100_000; i++)
            {
                Chan<int> output = Chan.Unbuffered<int>();
                rt.Detach(Stage(input, output));
                input = output;
            }

            await first.SendAsync(0);
            return await input.ReceiveAsync();
        });
        Console.WriteLine($"100,000 stages over unbuffered channels -> {last:N0} ({watch.ElapsedMilliseconds} ms)");
    }
}
