using System;
using System.Collections.Generic;
using Myriad.Scheduling;
using Xunit;

namespace Myriad.Tests.Support;

/// <summary>The runtimes tests run on.</summary>
public static class Runtimes
{
    /// <summary>Names accepted by <see cref="Create"/>, as theory data.</summary>
    public static IEnumerable<object[]> All() =>
    [
        ["multi"],
        ["current"],
        ["deterministic:1"],
        ["deterministic:7"],
    ];

    /// <summary>The single-threaded runtimes, as theory data for <see cref="CreateSingleThread"/>.</summary>
    public static TheoryData<string> SingleThreadKinds => new() { "current", "deterministic" };

    /// <summary>Creates the single-threaded runtime a <see cref="SingleThreadKinds"/> row names.</summary>
    public static SingleThreadRuntime CreateSingleThread(string kind) => kind == "current" ? new CurrentThreadRuntime() : new DeterministicRuntime(3);

    /// <summary>Creates the runtime a theory row names.</summary>
    public static JobRuntime Create(string name) => name switch
    {
        "multi" => new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 }),
        "current" => new CurrentThreadRuntime(),
        _ when name.StartsWith("deterministic:", StringComparison.Ordinal) => new DeterministicRuntime(int.Parse(name["deterministic:".Length..])),
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, "unknown runtime"),
    };
}
