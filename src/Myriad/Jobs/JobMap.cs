using System;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>
/// A job whose outcome is another job's, mapped by Myriad's own code on the thread that completes the
/// source: the slow paths of the BCL views (<c>ChannelReader.ReadAsync</c>, <c>WaitToReadAsync</c>,
/// an async enumerator's <c>MoveNextAsync</c>), which have bookkeeping to do after the receive.
/// </summary>
/// <remarks>
/// Not an <c>async Job</c> method: such a method started inside a job belongs to that job's runtime,
/// so the <c>ValueTask</c> the view returns could only complete while that runtime runs, and one
/// that escaped the job (awaited after a <c>CurrentThreadRuntime.Run</c> returned, or after its
/// runtime's disposal) never completed or ended canceled. Not an <c>async ValueTask</c> method
/// either: that is code of no runtime, which resumes on the thread pool when a runtime's thread
/// completes the receive, and the job awaiting the view came back at a moment real time chose (on a
/// <c>DeterministicRuntime</c>, outside the seed). This item runs where the source completes, as a
/// job continuation does, and runs no user code there: the map is the view's own, and the result
/// goes to a <see cref="Promise{T}"/>, whose awaiter resumes as it would after any Myriad job.
/// </remarks>
internal sealed class JobMap<TIn, TOut, TState> : WorkItem
{
    private readonly Job<TIn> _source;
    private readonly TState _state;
    private readonly Func<TState, Job<TIn>, TOut> _map;
    private readonly Promise<TOut> _target = new();

    private JobMap(Job<TIn> source, TState state, Func<TState, Job<TIn>, TOut> map)
    {
        _source = source;
        _state = state;
        _map = map;
    }

    /// <summary>
    /// <paramref name="map"/>(<paramref name="state"/>, <paramref name="source"/>) once the source
    /// completed: at once if it has, else on the thread that completes it. The map consumes the source
    /// (its <c>GetResult</c>) and may throw, which fails the returned job.
    /// </summary>
    internal static Job<TOut> Start(Job<TIn> source, TState state, Func<TState, Job<TIn>, TOut> map)
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

        var item = new JobMap<TIn, TOut, TState>(source, state, map);
        Adapters.Register(source._box, source._token, item);
        return item._target.Job;
    }

    internal override void Execute(PerThread state)
    {
        TOut result;
        try
        {
            result = _map(_state, _source);
        }
        catch (Exception exception)
        {
            _target.SetException(exception);
            return;
        }

        _target.SetResult(result);
    }
}
