using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad;

/// <summary>
/// A one-shot result cell: one side completes it once, the other awaits <see cref="Job"/> once.
/// The job-world counterpart of <see cref="System.Threading.Tasks.TaskCompletionSource{TResult}"/>.
/// </summary>
/// <remarks>
/// Completing runs the awaiting job's continuation through the trampoline (inline while the stack is
/// shallow), so completing a promise at the head of a million-job chain does not overflow the stack.
/// The <see cref="Job"/> may be awaited once; a second await throws <see cref="InvalidOperationException"/>.
/// Not pooled: a promise is an ordinary object with an ordinary lifetime.
/// The <c>TrySet</c> methods may race from any number of threads (as <c>Job.WhenAny</c> makes them):
/// exactly one wins and completes the promise; the others return false and change nothing.
/// </remarks>
public sealed class Promise<T>
{
    private readonly PromiseCell _cell = new();

    /// <summary>The job that completes when the promise does.</summary>
    public Job<T> Job => new(_cell, _cell.Version);

    /// <summary>Whether the promise has been completed.</summary>
    public bool IsCompleted => _cell.IsCompletedUnchecked;

    /// <summary>Completes with a result; false if already completed.</summary>
    public bool TrySetResult(T result) => _cell.TryClaim() && _cell.TrySetResult(result);

    /// <summary>Completes with an exception; false if already completed.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="exception"/> is null.</exception>
    public bool TrySetException(Exception exception)
    {
        ArgumentNullException.ThrowIfNull(exception);
        return _cell.TryClaim() && _cell.TrySetException(exception);
    }

    /// <summary>Completes as canceled; false if already completed.</summary>
    public bool TrySetCanceled(CancellationToken cancellationToken = default) =>
        _cell.TryClaim() && _cell.TrySetException(new OperationCanceledException(cancellationToken));

    /// <summary>Completes with a result.</summary>
    /// <exception cref="InvalidOperationException">Already completed.</exception>
    public void SetResult(T result)
    {
        if (!TrySetResult(result))
        {
            ThrowHelper.ThrowAlreadyCompleted();
        }
    }

    /// <summary>Completes with an exception.</summary>
    /// <exception cref="InvalidOperationException">Already completed.</exception>
    public void SetException(Exception exception)
    {
        if (!TrySetException(exception))
        {
            ThrowHelper.ThrowAlreadyCompleted();
        }
    }

    private sealed class PromiseCell : SourceBox<T>
    {
        /// <summary>
        /// 0 until a completer claims the cell, then 1 forever. The cell's own completion assumes a
        /// single completer (it checks, then writes, then publishes), so racing completers must be
        /// serialized first: only the one whose exchange returned 0 goes on to complete.
        /// </summary>
        private int _claimed;

        internal bool TryClaim() => Interlocked.Exchange(ref _claimed, 1) == 0;

        // Single use: consuming the result invalidates the one handle; the outcome stays.
        private protected override void Release() => InvalidateTokens();

        internal override string Describe() => $"Promise<{typeof(T).Name}>";
    }
}
