using System;
using System.Threading.Tasks.Sources;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>A <see cref="JobCell"/> with a result.</summary>
/// <typeparam name="T">The result type.</typeparam>
/// <remarks>Public only because <see cref="Channels.Chan{T}"/> derives from it; it has no public
/// members, implements no public interface, and cannot be derived from outside Myriad. The
/// <see cref="IValueTaskSource{TResult}"/> behind <see cref="Job{T}.AsValueTask"/> is on the internal
/// <see cref="SourceBox{T}"/>, so code holding a channel cannot drive its cell through it.</remarks>
[System.ComponentModel.EditorBrowsable(System.ComponentModel.EditorBrowsableState.Never)]
public abstract class JobBox<T> : JobCell
{
    private protected JobBox()
    {
    }

    private T _result = default!;

    internal bool TrySetResult(T result) => TrySetResult(result, null);

    /// <summary><see cref="TrySetResult(T)"/> for a caller that holds the calling thread's state (null: looked up when needed).</summary>
    internal bool TrySetResult(T result, PerThread? state)
    {
        if (IsCompletedUnchecked)
        {
            return false;
        }

        // _aux is left alone: pending, a cell parks no error there, and a state-machine box may keep
        // an attached ForeignAwait there, across its release (see StateMachineBox).
        _result = result;
        SignalCompletion(state);
        return true;
    }

    internal void SetResult(T result) => SetResult(result, null);

    /// <summary><see cref="SetResult(T)"/> for a caller that holds the calling thread's state (null: looked up when needed).</summary>
    internal void SetResult(T result, PerThread? state)
    {
        if (!TrySetResult(result, state))
        {
            ThrowHelper.ThrowAlreadyCompleted();
        }
    }

    /// <summary>Reads the outcome and releases the box; blocks first if the job is still pending.</summary>
    /// <remarks>Hidden from stack traces, as the BCL hides its awaiters' GetResult: a failure shows
    /// the frames of the code that threw and of the awaits it went through, not this plumbing.</remarks>
    [System.Diagnostics.StackTraceHidden]
    internal T GetResult(short token)
    {
        WaitForCompletion(token);
        JobFailure? error = _aux as JobFailure;
        T result = _result;
        Release();
        error?.Rethrow();
        return result;
    }

    /// <summary>
    /// For a <see cref="CellObserver"/> that wants the result too (a scope collecting its children's
    /// results): takes the outcome without throwing and releases the cell, which the observer's
    /// registration consumed.
    /// </summary>
    internal T ConsumeResultForObserver(short token, out Exception? error)
    {
        if (!IsCompletedNoThrow(token))
        {
            error = ThrowHelper.ConsumedTwice();
            return default!;
        }

        error = ErrorUnchecked;
        T result = _result;
        Release();
        return result;
    }

    /// <summary>
    /// For a cell that hands this outcome on (a spawn box): takes it and releases the cell, the
    /// failure as it was captured (null on success) instead of rethrown, so that a faulted or
    /// canceled spawn does not throw and catch its exception once more on the way. A consumed or
    /// stale handle (a misuse of the handle the body returned) is that misuse's failure. Releasing
    /// a select's cell runs its handler, which may still throw.
    /// </summary>
    internal T ConsumeOutcome(short token, out JobFailure? failure)
    {
        if (!IsCompletedNoThrow(token))
        {
            failure = JobFailure.Capture(ThrowHelper.ConsumedTwice());
            return default!;
        }

        failure = Error;
        T result = _result;
        Release();
        return result;
    }

    /// <summary>Clears everything for reuse; see <see cref="JobCell.ResetCell"/>.</summary>
    private protected void ResetBox()
    {
        _result = default!;
        ResetCell();
    }

    /// <summary>As <see cref="ResetBox"/>, keeping what a derived type parked in <c>_aux</c>.</summary>
    private protected void ResetBoxKeepingAux()
    {
        _result = default!;
        ResetCellKeepingAux();
    }
}

/// <summary>
/// A <see cref="JobBox{T}"/> that is also the <see cref="IValueTaskSource{TResult}"/> behind
/// <see cref="Job{T}.AsValueTask"/>, so converting a job to a <see cref="System.Threading.Tasks.ValueTask{TResult}"/>
/// allocates nothing. Every cell derives from it except <see cref="Channels.Chan{T}"/>, whose
/// conversion goes through a pooled forwarding job (see <see cref="Adapters.Forward{T}"/>).
/// </summary>
internal abstract class SourceBox<T> : JobBox<T>, IValueTaskSource<T>, IValueTaskSource
{
    /// <summary>
    /// This cell, for a <c>ValueTask</c> of the handle <paramref name="token"/>, once the handle was
    /// checked: a stale handle, or a job already awaited (its <c>AsTask()</c> taken, say), throws
    /// here, at the conversion. Awaited from <c>async Task</c> code, the ValueTask would throw only
    /// when its await registers, which the BCL's builders rethrow on the thread pool (ending the
    /// process) instead of at the <c>await</c>.
    /// </summary>
    internal SourceBox<T> ForValueTask(short token)
    {
        ValidateToken(token);
        if (HasAwaiter)
        {
            ThrowRegistrationRefused(token);
        }

        return this;
    }

    ValueTaskSourceStatus IValueTaskSource<T>.GetStatus(short token) => GetStatusCore(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => GetStatusCore(token);

    private ValueTaskSourceStatus GetStatusCore(short token)
    {
        if (!IsCompleted(token))
        {
            return ValueTaskSourceStatus.Pending;
        }

        JobFailure? error = Error;
        return error is null ? ValueTaskSourceStatus.Succeeded
            : error.Exception is OperationCanceledException ? ValueTaskSourceStatus.Canceled
            : ValueTaskSourceStatus.Faulted;
    }

    void IValueTaskSource<T>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => OnCompletedFromValueTask(continuation, state, token, flags);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => OnCompletedFromValueTask(continuation, state, token, flags);

    /// <summary>
    /// A job awaiting this cell through a <c>ValueTask</c> (<see cref="Job{T}.AsValueTask"/>, a
    /// <c>ChannelReader</c> view, an async enumerator) registers its own resume, as if it awaited the
    /// job: the completion then resumes it on its runtime right away, and on a
    /// <see cref="Scheduling.DeterministicRuntime"/> at a step the seed picks. Wrapped as code that is
    /// not a job, it went through the .NET thread pool first (such code never runs on a runtime's
    /// thread) and reached its runtime whenever a pool thread got to it: one more hop, and on a
    /// deterministic runtime a moment that real time chose. Anything else keeps the awaiter's flags.
    /// </summary>
    private void OnCompletedFromValueTask(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        if (ForeignAwait.OfValueTaskContinuation(continuation, state) is { } job)
        {
            JobRegistering(token);
            job.RegisteringOn(this, token); // what the job waits on, for the live-job dump and the deadlock check
            OnCompleted(job, token);
        }
        else
        {
            OnCompleted(ForeignContinuation.Create(continuation, state, flags), token);
        }
    }

    /// <summary>
    /// Called when a job is about to register its resume through a <c>ValueTask</c> of this cell,
    /// before it registers: a cell that must know the awaiting job's runtime records it here (the
    /// channel views, see <c>ChanBridge.ViewCell</c>). Nothing by default.
    /// </summary>
    private protected virtual void JobRegistering(short token)
    {
    }

    T IValueTaskSource<T>.GetResult(short token) => GetResult(token);

    void IValueTaskSource.GetResult(short token) => GetResult(token);
}

/// <summary>The result type of a non-generic <see cref="Job"/>.</summary>
internal readonly struct VoidResult;
