using System;
using Myriad.Scheduling;

namespace Myriad.Tests.Support;

/// <summary>Runs jobs on a runtime from a test, never hanging the test run (see <see cref="TestHelpers.OnThread(Action, int, TimeSpan?)"/>).</summary>
internal static class Bounded
{
    /// <summary>The longest any single test body may take before it is declared hung.</summary>
    internal static readonly TimeSpan Limit = TimeSpan.FromSeconds(30);

    /// <summary>Runs an async body on <paramref name="runtime"/> (blocking until it completes), bounded in time.</summary>
    internal static void Run(JobRuntime runtime, Func<Job> body, TimeSpan? limit = null) =>
        TestHelpers.OnThread(() => runtime.Run(body), timeout: limit ?? Limit);

    /// <summary>Runs an async body with a result on <paramref name="runtime"/>, bounded in time.</summary>
    internal static T Run<T>(JobRuntime runtime, Func<Job<T>> body, TimeSpan? limit = null) =>
        TestHelpers.OnThread(() => runtime.Run(body), timeout: limit ?? Limit);
}
