using System;
using System.Diagnostics.CodeAnalysis;

namespace Myriad.Internal;

/// <summary>Throw sites kept out of hot methods so those stay small enough to inline.</summary>
internal static class ThrowHelper
{
    [DoesNotReturn]
    internal static void ThrowAwaitedTwice() => throw new InvalidOperationException(
        "A Job was awaited twice (or awaited while another awaiter was already registered). A Job, like a ValueTask, may be awaited only once; use AsTask() to share its result.");

    [DoesNotReturn]
    internal static void ThrowStaleToken() => throw new InvalidOperationException(
        "This Job handle is no longer valid: its result was already consumed (the job was awaited twice or its result read twice) and its pooled state reused. A Job may be awaited only once; use AsTask() to share its result.");

    [DoesNotReturn]
    internal static void ThrowAlreadyCompleted() => throw new InvalidOperationException(
        "The job or promise was already completed.");

    [DoesNotReturn]
    internal static void ThrowObjectDisposed(string name) => throw new ObjectDisposedException(name);
}
