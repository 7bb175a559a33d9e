using System.Threading.Channels;
using System.Threading.Tasks;

namespace Myriad.Compare.Experiments;

/// <summary>Two workers, two unbuffered channels, N round trips: the pinger sends i, the ponger replies i+1, the pinger sums.</summary>
internal static class PingPong
{
    /// <summary>.NET 10 rendezvous channels and two plain <c>async Task</c> workers on the thread pool.</summary>
    public static long Tpl(Case c)
    {
        int n = checked((int)c.N);
        Channel<int> ping = Channel.CreateBounded<int>(0);
        Channel<int> pong = Channel.CreateBounded<int>(0);
        Task ponger = Task.Run(() => Ponger(ping, pong, n));
        long sum = Task.Run(() => Pinger(ping, pong, n)).GetAwaiter().GetResult();
        ponger.GetAwaiter().GetResult();
        return sum;
    }

    private static async Task<long> Pinger(Channel<int> ping, Channel<int> pong, int n)
    {
        long sum = 0;
        for (int i = 0; i < n; i++)
        {
            await ping.Writer.WriteAsync(i);
            sum += await pong.Reader.ReadAsync();
        }

        return sum;
    }

    private static async Task Ponger(Channel<int> ping, Channel<int> pong, int n)
    {
        for (int i = 0; i < n; i++)
        {
            int value = await ping.Reader.ReadAsync();
            await pong.Writer.WriteAsync(value + 1);
        }
    }
}
