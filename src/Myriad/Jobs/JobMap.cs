using System;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>
/// A job whose outcome is another job's, mapped by Myriad's own code on the thread that completes the
/// source: the slow path of an async enumerator's <c>MoveNextAsync</c> (a job scope's results), which
/// has bookkeeping to do after the wait. Pooled: one object per waiting read, reused once its outcome
/// is consumed. (The channel views, whose waits hand items over, have cells of their own that also
/// keep the disposal rule of a hand-off: ChanBridge.Cells.cs.)
/// </summary>
/// <remarks>
/// <para>Not an <c>async Job</c> method: such a method started inside a job belongs to that job's
/// runtime, so the <c>ValueTask</c> the view returns could only complete while that runtime runs,
/// and one that escaped the job (awaited after a <c>CurrentThreadRuntime.Run</c> returned, or after
/// its runtime's disposal) never completed or ended canceled. Not an <c>async ValueTask</c> method
/// either: that is code of no runtime, which resumes on the thread pool when a runtime's thread
/// completes the receive, and the job awaiting the view came back at a moment real time chose (on a
/// <c>DeterministicRuntime</c>, outside the seed). This box runs where the source completes, as a
/// job continuation does, and runs no user code there: the map is the view's own.</para>
/// <para><b>Life of one use.</b>
/// 1. <see cref="Start"/> rents the box, fills the source, state and map, reads the version for the
///    handle it returns, then registers the box as the source's one continuation. The version is read
///    first: the source may complete during the registration and the box with it.
/// 2. The source's completion calls <see cref="Execute"/> once (a cell dispatches its continuation
///    once per version). It clears the fields (what they reference need not outlive the read), runs
///    the map, and completes the box with the map's result or exception, which dispatches whoever
///    awaits the returned handle.
/// 3. Consuming the box's outcome (<c>GetResult</c>) releases it: reset, version bumped, back to its
///    pool. A handle kept past that point fails loudly on its stale token.</para>
/// <para>Never cancelable itself (pooled boxes never are): a canceled read is a canceled source,
/// whose outcome the map rethrows, so no cancellation callback can race the box's reuse.</para>
/// </remarks>
internal sealed class JobMap<TIn, TOut, TState> : SourceBox<TOut>
{
    private static readonly BoxPool<JobMap<TIn, TOut, TState>> s_pool = BoxPool<JobMap<TIn, TOut, TState>>.Shared;

    private Job<TIn> _source;
    private TState _state = default!;
    private Func<TState, Job<TIn>, TOut>? _map;

    /// <summary>What the box stands for in a live-job dump or a deadlock report (a literal: no allocation).</summary>
    private string _what = "";

    /// <summary>
    /// <paramref name="map"/>(<paramref name="state"/>, <paramref name="source"/>) once the source
    /// completed: at once if it has, else on the thread that completes it. The map consumes the source
    /// (its <c>GetResult</c>) and may throw, which fails the returned job. <paramref name="what"/>
    /// names the operation for diagnostics.
    /// </summary>
    internal static Job<TOut> Start(Job<TIn> source, TState state, Func<TState, Job<TIn>, TOut> map, string what)
    {
        if (source.IsCompleted)
        {
            try
            {
                return map(state, source);
            }
            catch (Exception exception)
            {
                return Job.FromException<TOut>(exception);
            }
        }

        // Step 1.
        JobMap<TIn, TOut, TState> box = s_pool.Rent() ?? new();
        box._source = source;
        box._state = state;
        box._map = map;
        box._what = what;
        short token = box.Version;
        Adapters.Register(source._box, source._token, box);
        return new Job<TOut>(box, token);
    }

    /// <summary>Step 2: the source completed.</summary>
    internal override void Execute(PerThread state)
    {
        Job<TIn> source = _source;
        TState value = _state;
        Func<TState, Job<TIn>, TOut> map = _map!;
        _source = default;
        _state = default!;
        _map = null;

        TOut result;
        try
        {
            result = map(value, source);
        }
        catch (Exception exception)
        {
            SetException(exception, state);
            return;
        }

        SetResult(result, state);
    }

    internal override string Describe() => _what;

    // Diagnostics only, a racy read: the source is what the read still waits for.
    internal override JobCell? AwaitedCell() => IsCompletedUnchecked ? null : _source._box;

    /// <summary>Step 3.</summary>
    private protected override void Release()
    {
        ResetBox();
        s_pool.Return(this);
    }
}
