using System.Threading.Channels;
using System.Threading.Tasks;

namespace Myriad.Compare.Experiments;

/// <summary>E2, channel form: N+1 unbuffered channels; worker i receives from i, adds 1, sends to i+1.</summary>
internal static class ChainChannels
{
    /// <summary>.NET 10 rendezvous channels (<c>Channel.CreateBounded&lt;int&gt;(0)</c>) and plain <c>async Task</c> workers.</summary>
    public static long Tpl(Case c) => Task.Run(() => TplChain(checked((int)c.N))).GetAwaiter().GetResult();

    private static async Task<int> TplChain(int n)
    {
        // The shape of the Go program (a daisy chain): each channel is reachable only through the
        // two workers that use it, not from an array the program keeps.
        Channel<int> first = Channel.CreateBounded<int>(0);
        Channel<int> left = first;
        for (int i = 0; i < n; i++)
        {
            Channel<int> right = Channel.CreateBounded<int>(0);
            _ = TplWorker(left, right);
            left = right;
        }

        await first.Writer.WriteAsync(0);
        return await left.Reader.ReadAsync();
    }

    /// <summary>The same program with every channel created first into an array, then the workers started.</summary>
    public static long TplArray(Case c) => Task.Run(() => TplArrayChain(checked((int)c.N))).GetAwaiter().GetResult();

    private static async Task<int> TplArrayChain(int n)
    {
        var channels = new Channel<int>[n + 1];
        for (int i = 0; i <= n; i++)
        {
            channels[i] = Channel.CreateBounded<int>(0);
        }

        for (int i = 0; i < n; i++)
        {
            _ = TplWorker(channels[i], channels[i + 1]);
        }

        await channels[0].Writer.WriteAsync(0);
        return await channels[n].Reader.ReadAsync();
    }

    private static async Task TplWorker(Channel<int> input, Channel<int> output)
    {
        int value = await input.Reader.ReadAsync();
        await output.Writer.WriteAsync(value + 1);
    }
}
