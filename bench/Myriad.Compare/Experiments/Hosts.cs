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

    /// <summary>The Myriad runtime: one worker per core, default options.</summary>
    public static MultiThreadRuntime Runtime =>
        LazyInitializer.EnsureInitialized(ref s_runtime, static () => new MultiThreadRuntime(new RuntimeOptions { WorkerCount = Environment.ProcessorCount }));

    /// <summary>The 2-thread TaskScheduler of the published "no Task.Yield" variant of E2.</summary>
    public static DedicatedTaskScheduler Dedicated =>
        LazyInitializer.EnsureInitialized(ref s_dedicated, static () => new DedicatedTaskScheduler(2));

    /// <summary>Runs <paramref name="body"/> on a fresh thread with a 1 MiB stack (the Windows default) and returns its result.</summary>
    public static long OnThread(Func<long> body, int stackSize = 1 << 20)
    {
        long result = 0;
        ExceptionDispatchInfo? error = null;
        var thread = new Thread(
            () =>
            {
                try
                {
                    result = body();
                }
                catch (Exception e)
                {
                    error = ExceptionDispatchInfo.Capture(e);
                }
            },
            stackSize)
        {
            Name = "compare 1 MiB",
            IsBackground = true,
        };
        thread.Start();
        thread.Join();
        error?.Throw();
        return result;
    }
}
