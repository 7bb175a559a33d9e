using System;
using System.Runtime.ExceptionServices;
using System.Threading;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Support;

/// <summary>Ways to run test bodies that can never hang the test run.</summary>
internal static class Bounded
{
    /// <summary>The longest any single test body may take before it is declared hung.</summary>
    internal static readonly TimeSpan Limit = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Runs <paramref name="body"/> on a dedicated thread and fails the test if it does not finish
    /// within <paramref name="limit"/> (the thread is abandoned: it is a background thread).
    /// </summary>
    internal static void Run(Action body, TimeSpan? limit = null)
    {
        ExceptionDispatchInfo? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                body();
            }
            catch (Exception e)
            {
                failure = ExceptionDispatchInfo.Capture(e);
            }
        }, maxStackSize: 0)
        {
            IsBackground = true,
            Name = "bounded test body",
        };
        thread.Start();
        if (!thread.Join(limit ?? Limit))
        {
            Assert.Fail($"The test body did not finish within {(limit ?? Limit).TotalSeconds} s: something hangs.");
        }

        failure?.Throw();
    }

    /// <summary>Runs an async body on <paramref name="runtime"/> (blocking until it completes), bounded in time.</summary>
    internal static void Run(JobRuntime runtime, Func<Job> body, TimeSpan? limit = null) =>
        Run(() => runtime.Run(body), limit);

    /// <summary>Runs an async body with a result on <paramref name="runtime"/>, bounded in time.</summary>
    internal static T Run<T>(JobRuntime runtime, Func<Job<T>> body, TimeSpan? limit = null)
    {
        T result = default!;
        Run(() => result = runtime.Run(body), limit);
        return result;
    }
}
