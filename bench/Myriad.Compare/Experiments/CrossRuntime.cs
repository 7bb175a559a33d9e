using System;
using System.Collections.Concurrent;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;

namespace Myriad.Compare.Experiments;

/// <summary>
/// Code that crosses a runtime's boundary: a ping-pong between a <see cref="CurrentThreadRuntime"/>
/// job and a <see cref="MultiThreadRuntime"/> job, and plain <c>async Task</c> code that awaits jobs.
/// Written against the public API only; correct wherever the runtime resumes a continuation.
/// </summary>
internal static class CrossRuntime
{
    /// <summary>
    /// The pinger is a job of a <see cref="CurrentThreadRuntime"/> driven by the calling thread
    /// (<c>Run</c>); the ponger is spawned on the <see cref="MultiThreadRuntime"/>; two
    /// <c>Chan.Unbuffered&lt;int&gt;()</c>, N round trips.
    /// </summary>
    public static long PingPongMyriad(Case c)
    {
        MultiThreadRuntime multi = Hosts.Runtime;
        CurrentThreadRuntime current = Hosts.CurrentThread;
        return current.Run((multi, checked((int)c.N)), static s => MyriadChannels.PingPongRun(s.multi, s.Item2)); // ping-pong's pinger, its ponger on the other runtime
    }

    /// <summary>
    /// The TPL shape of the same program: the pinger is <c>async Task</c> code on a thread with a
    /// single-threaded <see cref="SynchronizationContext"/> (as on a UI thread), the ponger runs on
    /// the thread pool; two <c>Channel.CreateBounded&lt;int&gt;(0)</c>.
    /// </summary>
    public static long PingPongTpl(Case c) => Hosts.ContextThread.Run(n => TplPinger(n), checked((int)c.N));

    private static async Task<long> TplPinger(int n)
    {
        Channel<int> ping = Channel.CreateBounded<int>(0);
        Channel<int> pong = Channel.CreateBounded<int>(0);
        Task ponger = Task.Run(() => TplPonger(ping, pong, n));
        long sum = 0;
        for (int i = 0; i < n; i++)
        {
            await ping.Writer.WriteAsync(i);
            sum += await pong.Reader.ReadAsync();
        }

        await ponger;
        return sum;
    }

    private static async Task TplPonger(Channel<int> ping, Channel<int> pong, int n)
    {
        for (int i = 0; i < n; i++)
        {
            int value = await ping.Reader.ReadAsync();
            await pong.Writer.WriteAsync(value + 1);
        }
    }

    /// <summary>
    /// Plain <c>async Task</c> code (not a job), started by a direct call on the calling thread,
    /// that awaits N jobs one after the other: <c>sum += await runtime.Spawn(i, static x => ...)</c>,
    /// each job suspending once (<c>await Task.Yield()</c>) before it returns its number.
    /// </summary>
    public static long AwaitJobsMyriad(Case c) => AwaitJobsLoop(Hosts.Runtime, c.N).GetAwaiter().GetResult();

    /// <summary>The same loop over <c>await Task.Run(async () => { await Task.Yield(); return i; })</c>.</summary>
    public static long AwaitJobsTpl(Case c) => AwaitTasksLoop(c.N).GetAwaiter().GetResult();

    public static long AwaitJobsExpected(Case c) => c.N * (c.N - 1) / 2;

    private static async Task<long> AwaitJobsLoop(MultiThreadRuntime runtime, long n)
    {
        long sum = 0;
        for (long i = 0; i < n; i++)
        {
            sum += await runtime.Spawn(i, static async x =>
            {
                await Task.Yield();
                return x;
            });
        }

        return sum;
    }

    private static async Task<long> AwaitTasksLoop(long n)
    {
        long sum = 0;
        for (long i = 0; i < n; i++)
        {
            long x = i;
            sum += await Task.Run(async () =>
            {
                await Task.Yield();
                return x;
            });
        }

        return sum;
    }
}

/// <summary>
/// A thread with a single-threaded <see cref="SynchronizationContext"/> that runs posted callbacks
/// in order, as a UI thread does: <c>async</c> code started there resumes there after each await.
/// </summary>
internal sealed class ContextThread
{
    private readonly BlockingCollection<(SendOrPostCallback Callback, object? State)> _queue = new();

    public ContextThread()
    {
        var thread = new Thread(Pump) { Name = "compare context thread", IsBackground = true };
        thread.Start();
    }

    /// <summary>Starts <paramref name="body"/> on the thread and blocks until its task completes.</summary>
    public long Run(Func<int, Task<long>> body, int n)
    {
        var done = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        _queue.Add((_ => Start(body, n, done), null));
        return done.Task.GetAwaiter().GetResult();
    }

    private static async void Start(Func<int, Task<long>> body, int n, TaskCompletionSource<long> done)
    {
        try
        {
            done.SetResult(await body(n));
        }
        catch (Exception e)
        {
            done.SetException(e);
        }
    }

    private void Pump()
    {
        SynchronizationContext.SetSynchronizationContext(new Context(this));
        foreach ((SendOrPostCallback callback, object? state) in _queue.GetConsumingEnumerable())
        {
            callback(state);
        }
    }

    private sealed class Context(ContextThread owner) : SynchronizationContext
    {
        public override void Post(SendOrPostCallback d, object? state) => owner._queue.Add((d, state));

        public override SynchronizationContext CreateCopy() => this;
    }
}
