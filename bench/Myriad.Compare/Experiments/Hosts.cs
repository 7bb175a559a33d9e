using System;
using System.Runtime.ExceptionServices;
using System.Threading;
using Myriad.Scheduling;

namespace Myriad.Compare.Experiments;

/// <summary>
/// Per-process shared infrastructure of the .NET variants. Created on first use, i.e. during the
/// child's warm-up run, just as the TPL's thread pool is already warm when the measured run starts.
/// </summary>
internal static class Hosts
{
    private static MultiThreadRuntime? s_runtime;
    private static DedicatedTaskScheduler? s_dedicated;

    /// <summary>Worker threads of every <see cref="MultiThreadRuntime"/> the variants create: one per core unless <c>--workers</c> says otherwise.</summary>
    public static int WorkerCount { get; set; } = Environment.ProcessorCount;

    /// <summary>The Myriad runtime: <see cref="WorkerCount"/> workers, default options otherwise.</summary>
    public static MultiThreadRuntime Runtime =>
        LazyInitializer.EnsureInitialized(ref s_runtime, static () => NewRuntime());

    /// <summary>A runtime of its own for a variant that disposes it: <see cref="WorkerCount"/> workers, default options otherwise.</summary>
    public static MultiThreadRuntime NewRuntime() => new(new RuntimeOptions { WorkerCount = WorkerCount });

    /// <summary>The 2-thread TaskScheduler of the published "no Task.Yield" variant of E2.</summary>
    public static DedicatedTaskScheduler Dedicated =>
        LazyInitializer.EnsureInitialized(ref s_dedicated, static () => new DedicatedTaskScheduler(2));

    private static CurrentThreadRuntime? s_currentThread;
    private static ContextThread? s_contextThread;

    /// <summary>A current-thread runtime, driven by whichever thread calls its <c>Run</c>.</summary>
    public static CurrentThreadRuntime CurrentThread =>
        LazyInitializer.EnsureInitialized(ref s_currentThread, static () => new CurrentThreadRuntime("compare current-thread"));

    /// <summary>A thread with a single-threaded SynchronizationContext (the TPL counterpart of a current-thread runtime).</summary>
    public static ContextThread ContextThread =>
        LazyInitializer.EnsureInitialized(ref s_contextThread, static () => new ContextThread());

    private static StackThread? s_stackThread;

    /// <summary>
    /// Runs <paramref name="body"/> on a thread with a 1 MiB stack (the Windows default; Linux gives
    /// the main thread 8 MiB) and returns its result. The thread is created once per process, during
    /// the warm-up, so the measured run does not pay for creating it.
    /// </summary>
    public static long OnThread(Func<long> body) =>
        LazyInitializer.EnsureInitialized(ref s_stackThread, static () => new StackThread(1 << 20)).Run(body);

    private sealed class StackThread
    {
        private readonly System.Collections.Concurrent.BlockingCollection<Action> _work = new();

        public StackThread(int stackSize)
        {
            var thread = new Thread(
                () =>
                {
                    foreach (Action a in _work.GetConsumingEnumerable())
                    {
                        a();
                    }
                },
                stackSize)
            {
                Name = "compare 1 MiB",
                IsBackground = true,
            };
            thread.Start();
        }

        public long Run(Func<long> body)
        {
            long result = 0;
            ExceptionDispatchInfo? error = null;
            using var done = new ManualResetEventSlim();
            _work.Add(() =>
            {
                try
                {
                    result = body();
                }
                catch (Exception e)
                {
                    error = ExceptionDispatchInfo.Capture(e);
                }
                finally
                {
                    done.Set();
                }
            });
            done.Wait();
            error?.Throw();
            return result;
        }
    }
}
