using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad;

/// <summary>
/// A one-shot result cell: one side completes it once, the other awaits <see cref="Job"/>.
/// The job-world counterpart of <see cref="System.Threading.Tasks.TaskCompletionSource{TResult}"/>.
/// </summary>
/// <remarks>
/// <para>Completing runs the awaiting job's continuation through the trampoline (inline while the stack is
/// shallow), so completing a promise at the head of a million-job chain does not overflow the stack.</para>
/// <para><b>Handles.</b> Each handle is single-use, like any <see cref="Myriad.Job{T}"/>: awaiting it
/// (or reading its result) consumes it, and a second await of the same handle throws
/// <see cref="InvalidOperationException"/>. Every read of <see cref="Job"/> until that consumption
/// returns the same handle: only one of the copies may be awaited, and a second awaiter throws.
/// Once it is consumed, reading <see cref="Job"/> again returns a fresh handle to the same outcome
/// (the outcome is never cleared, since the promise is not pooled): so a completed promise's result
/// can be read any number of times, one consumer after another, each through a fresh read of
/// <see cref="Job"/>. To share the result among awaiters that wait at the same time, use
/// <see cref="Job{T}.AsTask"/>.</para>
/// <para>Not pooled: a promise is an ordinary object with an ordinary lifetime.
/// The <c>TrySet</c> methods may race from any number of threads (as <c>Job.WhenAny</c> makes them):
/// exactly one wins and completes the promise; the others return false and change nothing.</para>
/// </remarks>
public sealed class Promise<T>
{
    private readonly PromiseCell _cell;

    /// <summary>Creates a pending promise.</summary>
    public Promise() => _cell = new PromiseCell();

    /// <summary>A promise that a live-job dump shows as <paramref name="description"/> (a combinator's own promise: <c>Job.WhenAny</c>).</summary>
    internal Promise(string description) => _cell = new DescribedPromiseCell(description);

    /// <summary>
    /// Diagnostics only (the deadlock check of a deterministic runtime, which must know that a race
    /// over another runtime's job can still be woken): the cells a combinator's promise races. Set
    /// once, before the race can be decided; <see cref="ForgetRaced"/> drops them when it is.
    /// </summary>
    internal void Races(JobCell?[] cells) => ((DescribedPromiseCell)_cell).Raced = cells;

    /// <summary>Drops what <see cref="Races"/> set, so that a decided race keeps no contestant's cell reachable.</summary>
    internal void ForgetRaced() => ((DescribedPromiseCell)_cell).Raced = null;

    /// <summary><see cref="TrySetResult"/> for a race's promise: the winner also forgets the contestants (<see cref="ForgetRaced"/>).</summary>
    internal bool TryDecide(T result)
    {
        if (!TrySetResult(result))
        {
            return false;
        }

        ForgetRaced();
        return true;
    }

    /// <summary>
    /// A handle to the job that completes when the promise does. Single-use; after it was consumed,
    /// reading this again gives a fresh handle to the same outcome (see the type's remarks).
    /// </summary>
    public Job<T> Job => new(_cell, _cell.Version);

    /// <summary>Whether the promise has been completed.</summary>
    public bool IsCompleted => _cell.IsCompletedUnchecked;

    /// <summary>Completes with a result; false if already completed.</summary>
    public bool TrySetResult(T result) => _cell.TryClaim() && _cell.TrySetResult(result);

    /// <summary>Completes with an exception (an <see cref="OperationCanceledException"/> completes it as canceled, see <see cref="Job.FromException{T}"/>); false if already completed.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="exception"/> is null.</exception>
    public bool TrySetException(Exception exception)
    {
        ArgumentNullException.ThrowIfNull(exception);
        return _cell.TryClaim() && _cell.TrySetException(exception);
    }

    /// <summary>Completes as canceled; false if already completed.</summary>
    public bool TrySetCanceled(CancellationToken cancellationToken = default) =>
        _cell.TryClaim() && _cell.TrySetException(ThrowHelper.Canceled(cancellationToken));

    /// <summary>Completes with a result.</summary>
    /// <exception cref="InvalidOperationException">Already completed.</exception>
    public void SetResult(T result)
    {
        if (!TrySetResult(result))
        {
            ThrowHelper.ThrowAlreadyCompleted();
        }
    }

    /// <summary>Completes with an exception (an <see cref="OperationCanceledException"/> completes it as canceled, see <see cref="Job.FromException{T}"/>).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="exception"/> is null.</exception>
    /// <exception cref="InvalidOperationException">Already completed.</exception>
    public void SetException(Exception exception)
    {
        if (!TrySetException(exception))
        {
            ThrowHelper.ThrowAlreadyCompleted();
        }
    }

    /// <summary>Completes as canceled (the awaiter gets <see cref="OperationCanceledException"/> carrying <paramref name="cancellationToken"/>).</summary>
    /// <exception cref="InvalidOperationException">Already completed.</exception>
    public void SetCanceled(CancellationToken cancellationToken = default)
    {
        if (!TrySetCanceled(cancellationToken))
        {
            ThrowHelper.ThrowAlreadyCompleted();
        }
    }

    private class PromiseCell : SourceBox<T>
    {
        /// <summary>
        /// 0 until a completer claims the cell, then 1 forever. The cell's own completion assumes a
        /// single completer (it checks, then writes, then publishes), so racing completers must be
        /// serialized first: only the one whose exchange returned 0 goes on to complete.
        /// </summary>
        private int _claimed;

        internal bool TryClaim() => Interlocked.Exchange(ref _claimed, 1) == 0;

        // Single use per handle: consuming the result invalidates the current handle; the outcome
        // stays, so the next read of Promise.Job (stamped with the new version) reads it again.
        private protected override void Release() => InvalidateTokens();

        internal override string Describe() => $"Promise<{Diagnostics.CompilerNames.DescribeType(typeof(T))}>";
    }

    private sealed class DescribedPromiseCell(string description) : PromiseCell
    {
        /// <summary>Written by the combinator before it can be decided, read racily by diagnostics.</summary>
        internal JobCell?[]? Raced;

        internal override string Describe() => description;

        internal override JobCell?[]? RacedCells() => IsCompletedUnchecked ? null : Volatile.Read(ref Raced);

        // A race's promise (Job.WhenAny, WaitAsync) is completed by whatever completes a contestant,
        // a plain thread's TrySend or Release included: plain code awaiting the race must not run
        // inside that call any more than code awaiting the contestant itself (see JobCell).
        private protected override bool ResumesForeignWaitersAsynchronously => true;
    }
}
