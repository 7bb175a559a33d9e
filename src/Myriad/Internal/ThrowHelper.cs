using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.ExceptionServices;
using System.Threading;

namespace Myriad.Internal;

/// <summary>Throw sites kept out of hot methods so those stay small enough to inline.</summary>
internal static class ThrowHelper
{
    /// <summary>The text of the BCL's own <see cref="System.OperationCanceledException"/> for a token.</summary>
    private const string CanceledMessage = "The operation was canceled.";

    /// <summary>
    /// The exception a canceled operation ends with. The BCL constructor that takes only a token
    /// looks its message up in the resources each time (about 50 ns here, six times the rest of
    /// the constructor); every cancellation path of Myriad goes through this one instead, with the
    /// same message.
    /// </summary>
    internal static System.OperationCanceledException Canceled(System.Threading.CancellationToken token) => new(CanceledMessage, token);

    [DoesNotReturn]
    internal static void ThrowAwaitedTwice() => throw new InvalidOperationException(AwaitedTwiceMessage);

    private const string AwaitedTwiceMessage =
        "A Job was awaited twice (or awaited while another awaiter was already registered). A Job, like a ValueTask, may be awaited only once; use AsTask() to share its result.";

    private const string ConsumedTwiceMessage =
        "This Job handle is no longer valid: its result was already consumed (the job was awaited twice or its result read twice) and its pooled state reused. A Job may be awaited only once; use AsTask() to share its result.";

    /// <summary>
    /// Whether <paramref name="error"/> is the misuse of a handle awaited or consumed twice, as thrown
    /// here. Compared by the message's reference (an exception keeps the string it was given), so
    /// user code's own <see cref="InvalidOperationException"/>s cost one comparison.
    /// </summary>
    internal static bool IsAwaitedOrConsumedTwice(Exception error) =>
        error is InvalidOperationException && (ReferenceEquals(error.Message, ConsumedTwiceMessage) || ReferenceEquals(error.Message, AwaitedTwiceMessage));

    [DoesNotReturn]
    internal static void ThrowStaleToken() => throw ConsumedTwice();

    /// <summary>The exception of a consumer that found the job's outcome taken already (the stale-token misuse).</summary>
    internal static InvalidOperationException ConsumedTwice() => new(ConsumedTwiceMessage);

    /// <summary>A blocking wait with too little stack left to run a runtime's work nested on it, where no other thread can run that work meanwhile (see <c>BlockingWaiter</c>).</summary>
    [DoesNotReturn]
    internal static void ThrowWaitNestedTooDeep() => throw new InsufficientExecutionStackException(
        "Job.Wait() (or Run) is nested too deeply: every blocking wait on a runtime's thread runs the runtime's other jobs on top of its own frame, one more would overflow the stack, and no other thread is left to run them (a single-threaded runtime has only its driving thread; a multi-threaded one had all its spare threads in use, see RuntimeOptions.MaxSpareThreads). Await the job instead of blocking on it.");

    [DoesNotReturn]
    internal static void ThrowAlreadyCompleted() => throw new InvalidOperationException(
        "The job or promise was already completed.");

    [DoesNotReturn]
    internal static void ThrowObjectDisposed(string name) => throw new ObjectDisposedException(name);

    /// <summary>
    /// Where the exception of a continuation that is not Myriad's own goes (a raw <see cref="Action"/>
    /// registered through an awaiter's <c>OnCompleted</c>, a <c>ValueTask</c> consumer's callback, an
    /// event handler). Such code runs inline inside a completion; letting its exception unwind there
    /// would skip the trampoline's and the builder's bookkeeping. By default it is rethrown on the
    /// thread pool, where an <c>async void</c> method's exception goes. Tests replace the hook.
    /// </summary>
    internal static Action<Exception> ContinuationFailed = static exception =>
    {
        ExceptionDispatchInfo failure = ExceptionDispatchInfo.Capture(exception);
        ThreadPool.UnsafeQueueUserWorkItem(static f => f.Throw(), failure, preferLocal: false);
    };
}
