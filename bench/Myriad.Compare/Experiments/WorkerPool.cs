using System;
using System.Globalization;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;

namespace Myriad.Compare.Experiments;

/// <summary>
/// P producers and C consumers over one bounded channel: producer p sends the items p, p + P,
/// p + 2P, ... below N; consumers add up what they receive until the channel is closed (after the
/// last producer finished); the result is the sum of the consumers' sums, 0 + 1 + ... + (N-1).
/// </summary>
/// <remarks>The case's mode names the shape and the capacity: <c>4x4/cap=1024</c> is 4 producers,
/// 4 consumers and room for 1024 items; <c>cap=0</c> is an unbuffered (rendezvous) channel.</remarks>
internal static class WorkerPool
{
    public static string Mode(int producers, int consumers, int capacity) =>
        string.Create(CultureInfo.InvariantCulture, $"{producers}x{consumers}/cap={capacity}");

    /// <summary>Parses <see cref="Mode"/>'s format.</summary>
    public static (int Producers, int Consumers, int Capacity) Parse(string mode)
    {
        string[] parts = mode.Split('/');
        string[] shape = parts[0].Split('x');
        if (parts.Length != 2 || shape.Length != 2 || !parts[1].StartsWith("cap=", StringComparison.Ordinal))
        {
            throw new FormatException($"worker-pool mode '{mode}' is not PxC/cap=K");
        }

        return (
            int.Parse(shape[0], CultureInfo.InvariantCulture),
            int.Parse(shape[1], CultureInfo.InvariantCulture),
            int.Parse(parts[1]["cap=".Length..], CultureInfo.InvariantCulture));
    }

    public static long Expected(Case c) => c.N * (c.N - 1) / 2;

    /// <summary>
    /// <c>Chan.Bounded&lt;long&gt;(K)</c> (<c>Chan.Unbuffered</c> for 0), producers <c>SendAsync</c>,
    /// consumers <c>await foreach</c> over <c>ReadAllAsync</c>, all spawned on the runtime; <c>Close</c> at the end.
    /// </summary>
    public static long Myriad(Case c)
    {
        (int p, int k, int capacity) = Parse(c.Mode);
        MultiThreadRuntime runtime = Hosts.Runtime;
        return runtime.Run((runtime, c.N, p, k, capacity), static s => MyriadPool(s.runtime, s.N, s.p, s.k, s.capacity));
    }

    /// <summary><c>Channel.CreateBounded&lt;long&gt;(K)</c> (.NET 10 accepts 0: a rendezvous), <c>WriteAsync</c> and <c>ReadAllAsync</c>, on the thread pool.</summary>
    public static long Tpl(Case c)
    {
        (int p, int k, int capacity) = Parse(c.Mode);
        return Task.Run(() => TplPool(c.N, p, k, capacity)).GetAwaiter().GetResult();
    }

    private static async Job<long> MyriadPool(JobRuntime runtime, long n, int producers, int consumers, int capacity)
    {
        Chan<long> channel = capacity == 0 ? Chan.Unbuffered<long>() : Chan.Bounded<long>(capacity);
        var senders = new Job[producers];
        for (int p = 0; p < producers; p++)
        {
            senders[p] = runtime.Spawn((channel, first: (long)p, step: (long)producers, n), static s => Produce(s.channel, s.first, s.step, s.n));
        }

        var receivers = new Job<long>[consumers];
        for (int k = 0; k < consumers; k++)
        {
            receivers[k] = runtime.Spawn(channel, static ch => Consume(ch));
        }

        foreach (Job sender in senders)
        {
            await sender;
        }

        channel.Close();
        long sum = 0;
        foreach (Job<long> receiver in receivers)
        {
            sum += await receiver;
        }

        return sum;
    }

    private static async Job Produce(Chan<long> channel, long first, long step, long n)
    {
        for (long i = first; i < n; i += step)
        {
            await channel.SendAsync(i);
        }
    }

    private static async Job<long> Consume(Chan<long> channel)
    {
        long sum = 0;
        await foreach (long item in channel.ReadAllAsync())
        {
            sum += item;
        }

        return sum;
    }

    private static async Task<long> TplPool(long n, int producers, int consumers, int capacity)
    {
        Channel<long> channel = Channel.CreateBounded<long>(capacity);
        var senders = new Task[producers];
        for (int p = 0; p < producers; p++)
        {
            long first = p;
            senders[p] = Task.Run(() => TplProduce(channel.Writer, first, producers, n));
        }

        var receivers = new Task<long>[consumers];
        for (int k = 0; k < consumers; k++)
        {
            receivers[k] = Task.Run(() => TplConsume(channel.Reader));
        }

        await Task.WhenAll(senders);
        channel.Writer.Complete();
        long sum = 0;
        foreach (Task<long> receiver in receivers)
        {
            sum += await receiver;
        }

        return sum;
    }

    private static async Task TplProduce(ChannelWriter<long> writer, long first, long step, long n)
    {
        for (long i = first; i < n; i += step)
        {
            await writer.WriteAsync(i);
        }
    }

    private static async Task<long> TplConsume(ChannelReader<long> reader)
    {
        long sum = 0;
        await foreach (long item in reader.ReadAllAsync())
        {
            sum += item;
        }

        return sum;
    }
}
