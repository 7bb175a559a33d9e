using Myriad.Channels;
using Myriad.Scheduling;

namespace Myriad.Compare.Experiments;

/// <summary>The myriad variants of chain-channels (E2, channel form) and ping-pong.</summary>
internal static class MyriadChannels
{
    /// <summary>
    /// N+1 <c>Chan.Unbuffered&lt;int&gt;()</c>; N <c>async Job</c> workers, each started by calling it
    /// (it runs up to its first receive, like the tpl variant's <c>_ = TplWorker(...)</c>) and handed to
    /// <c>runtime.Detach</c>; main sends 0 and reads N.
    /// </summary>
    public static long Chain(Case c)
    {
        MultiThreadRuntime runtime = Hosts.Runtime;
        return runtime.Run((runtime, checked((int)c.N)), static s => ChainRun(s.runtime, s.Item2, spawn: false));
    }

    /// <summary>As <see cref="Chain"/>, but every worker is queued with <c>runtime.SpawnDetached</c>.</summary>
    public static long ChainSpawned(Case c)
    {
        MultiThreadRuntime runtime = Hosts.Runtime;
        return runtime.Run((runtime, checked((int)c.N)), static s => ChainRun(s.runtime, s.Item2, spawn: true));
    }

    /// <summary>Two <c>Chan.Unbuffered&lt;int&gt;()</c>; the ponger is spawned on the runtime, the pinger runs inside <c>runtime.Run</c>.</summary>
    public static long PingPong(Case c)
    {
        MultiThreadRuntime runtime = Hosts.Runtime;
        return runtime.Run((runtime, checked((int)c.N)), static s => PingPongRun(s.runtime, s.Item2));
    }

    private static async Job<int> ChainRun(JobRuntime runtime, int n, bool spawn)
    {
        // The shape of the Go program (a daisy chain), as in ChainChannels.Tpl.
        Chan<int> first = Chan.Unbuffered<int>();
        Chan<int> left = first;
        for (int i = 0; i < n; i++)
        {
            Chan<int> right = Chan.Unbuffered<int>();
            if (spawn)
            {
                runtime.SpawnDetached((left, right), static s => ChainWorker(s.left, s.right));
            }
            else
            {
                runtime.Detach(ChainWorker(left, right));
            }

            left = right;
        }

        await first.SendAsync(0);
        return await left.ReceiveAsync();
    }

    private static async Job ChainWorker(Chan<int> input, Chan<int> output)
    {
        int value = await input.ReceiveAsync();
        await output.SendAsync(value + 1);
    }

    /// <summary>The pinger: spawns the ponger on <paramref name="runtime"/> (its own runtime, or another one in cross-ping-pong) and sums the replies.</summary>
    internal static async Job<long> PingPongRun(JobRuntime runtime, int n)
    {
        Chan<int> ping = Chan.Unbuffered<int>();
        Chan<int> pong = Chan.Unbuffered<int>();
        Job ponger = runtime.Spawn((ping, pong, n), static s => Ponger(s.ping, s.pong, s.n));
        long sum = 0;
        for (int i = 0; i < n; i++)
        {
            await ping.SendAsync(i);
            sum += await pong.ReceiveAsync();
        }

        await ponger;
        return sum;
    }

    private static async Job Ponger(Chan<int> ping, Chan<int> pong, int n)
    {
        for (int i = 0; i < n; i++)
        {
            int value = await ping.ReceiveAsync();
            await pong.SendAsync(value + 1);
        }
    }
}
