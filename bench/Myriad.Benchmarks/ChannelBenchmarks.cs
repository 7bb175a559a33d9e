using System.Threading.Channels;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using Myriad.Channels;
using Myriad.Scheduling;

namespace Myriad.Benchmarks;

/// <summary>
/// One send + one receive per channel kind, through the async API of each library
/// (<c>WriteAsync</c>/<c>ReadAsync</c> vs <c>SendAsync</c>/<c>ReceiveAsync</c>). Buffered kinds: send then
/// receive on one thread (both complete synchronously). Unbuffered: 1000 round trips between two
/// jobs (a rendezvous needs a partner), figures per round trip, also through the
/// ChannelReader/ChannelWriter views. One select over two channels, and one over four channels of
/// mixed element types and operations with one case ready. Contended: the worker-pool shape, 4
/// producers and 4 consumers over one channel (capacity 1024, and unbuffered), producers sending with
/// the async send and consumers enumerating with <c>await foreach</c> over <c>ReadAllAsync</c>;
/// figures per item.
/// </summary>
[Config(typeof(BenchConfig))]
[CategoriesColumn]
[GroupBenchmarksBy(BenchmarkDotNet.Configs.BenchmarkLogicalGroupRule.ByCategory)]
public class ChannelBenchmarks
{
    private const int RoundTrips = 1000;

    private MultiThreadRuntime _runtime = null!;
    private Chan<int> _bounded = null!;
    private Chan<int> _unbounded = null!;
    private Chan<int> _selectA = null!;
    private Chan<int> _selectB = null!;
    private Chan<int> _select4Int = null!;
    private Chan<string> _select4String = null!;
    private Chan<long> _select4Full = null!;
    private Chan<int> _select4Ready = null!;
    private Channel<int> _tplBounded = null!;
    private Channel<int> _tplUnbounded = null!;

    [GlobalSetup]
    public void Setup()
    {
        _runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = System.Environment.ProcessorCount });
        _bounded = Chan.Bounded<int>(1024);
        _unbounded = Chan.Unbounded<int>();
        _selectA = Chan.Bounded<int>(1);
        _selectB = Chan.Bounded<int>(1);
        _select4Int = Chan.Bounded<int>(1);
        _select4String = Chan.Bounded<string>(1);
        _select4Full = Chan.Bounded<long>(1);
        _select4Full.TrySend(7);
        _select4Ready = Chan.Bounded<int>(1);
        _tplBounded = Channel.CreateBounded<int>(1024);
        _tplUnbounded = Channel.CreateUnbounded<int>();
    }

    [GlobalCleanup]
    public void Cleanup() => _runtime.Dispose();

    [Benchmark(Baseline = true), BenchmarkCategory("bounded")]
    public int Bounded_Tpl()
    {
        _tplBounded.Writer.WriteAsync(1).GetAwaiter().GetResult();
        return _tplBounded.Reader.ReadAsync().GetAwaiter().GetResult();
    }

    [Benchmark, BenchmarkCategory("bounded")]
    public int Bounded_Myriad()
    {
        _bounded.SendAsync(1).Wait();
        return _bounded.ReceiveAsync().Wait();
    }

    [Benchmark(Baseline = true), BenchmarkCategory("unbounded")]
    public int Unbounded_Tpl()
    {
        _tplUnbounded.Writer.WriteAsync(1).GetAwaiter().GetResult();
        return _tplUnbounded.Reader.ReadAsync().GetAwaiter().GetResult();
    }

    [Benchmark, BenchmarkCategory("unbounded")]
    public int Unbounded_Myriad()
    {
        _unbounded.SendAsync(1).Wait();
        return _unbounded.ReceiveAsync().Wait();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = RoundTrips), BenchmarkCategory("unbuffered")]
    public long Unbuffered_Tpl() => Task.Run(static () => TplPingPong()).GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = RoundTrips), BenchmarkCategory("unbuffered")]
    public long Unbuffered_Myriad() => _runtime.Run(_runtime, static rt => MyriadPingPong(rt));

    /// <summary>
    /// The same ping-pong between two jobs, written against the <c>ChannelReader</c>/<c>ChannelWriter</c>
    /// views (code ported from System.Threading.Channels by changing only how the channels are made):
    /// every await is on a <c>ValueTask</c> over a Myriad cell.
    /// </summary>
    [Benchmark(OperationsPerInvoke = RoundTrips), BenchmarkCategory("unbuffered")]
    public long Unbuffered_MyriadViews() => _runtime.Run(_runtime, static rt => MyriadViewsPingPong(rt));

    /// <summary>One select over two channels, one of which holds an item: the select commits at once.</summary>
    [Benchmark, BenchmarkCategory("select")]
    public int Select_Myriad()
    {
        _selectB.TrySend(1);
        return Select.Receive(_selectA).Receive(_selectB).AsJob().Wait();
    }

    /// <summary>
    /// One select over four channels of three element types, one case ready: receive from an empty
    /// <c>Chan&lt;int&gt;</c>, receive from an empty <c>Chan&lt;string&gt;</c>, send to a full
    /// <c>Chan&lt;long&gt;</c>, and receive from a <c>Chan&lt;int&gt;</c> that holds an item (put there by
    /// the <c>TrySend</c> that opens each invocation). The select commits at once; the losing cases
    /// must consume and complete nothing.
    /// </summary>
    [Benchmark, BenchmarkCategory("select4")]
    public int Select4_OneReady_Myriad()
    {
        _select4Ready.TrySend(1);
        return Select.Receive(_select4Int)
            .Receive(_select4String)
            .Send(_select4Full, 8L)
            .Receive(_select4Ready)
            .AsJob()
            .Wait();
    }

    /// <summary>Items per contended invocation (each passes from one of 4 producers to one of 4 consumers).</summary>
    private const int ContendedItems = 100_000;

    [Benchmark(Baseline = true, OperationsPerInvoke = ContendedItems), BenchmarkCategory("contended-1024")]
    public long Contended1024_Tpl() => Task.Run(static () => TplPool(1024)).GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = ContendedItems), BenchmarkCategory("contended-1024")]
    public long Contended1024_Myriad() => _runtime.Run(_runtime, static rt => MyriadPool(rt, 1024));

    [Benchmark(Baseline = true, OperationsPerInvoke = ContendedItems), BenchmarkCategory("contended-unbuffered")]
    public long ContendedUnbuffered_Tpl() => Task.Run(static () => TplPool(0)).GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = ContendedItems), BenchmarkCategory("contended-unbuffered")]
    public long ContendedUnbuffered_Myriad() => _runtime.Run(_runtime, static rt => MyriadPool(rt, 0));

    private static async Task<long> TplPool(int capacity)
    {
        Channel<long> channel = Channel.CreateBounded<long>(capacity);
        var producers = new Task[4];
        for (int p = 0; p < producers.Length; p++)
        {
            long first = p;
            producers[p] = Task.Run(async () =>
            {
                for (long i = first; i < ContendedItems; i += 4)
                {
                    await channel.Writer.WriteAsync(i);
                }
            });
        }

        var consumers = new Task<long>[4];
        for (int k = 0; k < consumers.Length; k++)
        {
            consumers[k] = Task.Run(async () =>
            {
                long sum = 0;
                await foreach (long item in channel.Reader.ReadAllAsync())
                {
                    sum += item;
                }

                return sum;
            });
        }

        await Task.WhenAll(producers);
        channel.Writer.Complete();
        long total = 0;
        foreach (Task<long> consumer in consumers)
        {
            total += await consumer;
        }

        return total;
    }

    private static async Job<long> MyriadPool(JobRuntime runtime, int capacity)
    {
        Chan<long> channel = capacity == 0 ? Chan.Unbuffered<long>() : Chan.Bounded<long>(capacity);
        var producers = new Job[4];
        for (int p = 0; p < producers.Length; p++)
        {
            producers[p] = runtime.Spawn((channel, first: (long)p), static async s =>
            {
                for (long i = s.first; i < ContendedItems; i += 4)
                {
                    await s.channel.SendAsync(i);
                }
            });
        }

        var consumers = new Job<long>[4];
        for (int k = 0; k < consumers.Length; k++)
        {
            consumers[k] = runtime.Spawn(channel, static async c =>
            {
                long sum = 0;
                await foreach (long item in c.ReadAllAsync())
                {
                    sum += item;
                }

                return sum;
            });
        }

        foreach (Job producer in producers)
        {
            await producer;
        }

        channel.Close();
        long total = 0;
        foreach (Job<long> consumer in consumers)
        {
            total += await consumer;
        }

        return total;
    }

    private static async Task<long> TplPingPong()
    {
        Channel<int> ping = Channel.CreateBounded<int>(0), pong = Channel.CreateBounded<int>(0);
        Task ponger = Task.Run(async () =>
        {
            for (int i = 0; i < RoundTrips; i++)
            {
                await pong.Writer.WriteAsync(await ping.Reader.ReadAsync() + 1);
            }
        });
        long sum = 0;
        for (int i = 0; i < RoundTrips; i++)
        {
            await ping.Writer.WriteAsync(i);
            sum += await pong.Reader.ReadAsync();
        }

        await ponger;
        return sum;
    }

    private static async Job<long> MyriadViewsPingPong(JobRuntime runtime)
    {
        Chan<int> ping = Chan.Unbuffered<int>(), pong = Chan.Unbuffered<int>();
        Job ponger = runtime.Spawn((ping.Reader, pong.Writer), static async s =>
        {
            for (int i = 0; i < RoundTrips; i++)
            {
                await s.Writer.WriteAsync(await s.Reader.ReadAsync() + 1);
            }
        });
        ChannelWriter<int> pingWriter = ping.Writer;
        ChannelReader<int> pongReader = pong.Reader;
        long sum = 0;
        for (int i = 0; i < RoundTrips; i++)
        {
            await pingWriter.WriteAsync(i);
            sum += await pongReader.ReadAsync();
        }

        await ponger;
        return sum;
    }

    private static async Job<long> MyriadPingPong(JobRuntime runtime)
    {
        Chan<int> ping = Chan.Unbuffered<int>(), pong = Chan.Unbuffered<int>();
        Job ponger = runtime.Spawn((ping, pong), static async s =>
        {
            for (int i = 0; i < RoundTrips; i++)
            {
                await s.pong.SendAsync(await s.ping.ReceiveAsync() + 1);
            }
        });
        long sum = 0;
        for (int i = 0; i < RoundTrips; i++)
        {
            await ping.SendAsync(i);
            sum += await pong.ReceiveAsync();
        }

        await ponger;
        return sum;
    }
}
