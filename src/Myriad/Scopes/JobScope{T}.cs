using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Jobs;
using Myriad.Scheduling;

namespace Myriad;

/// <summary>
/// A <see cref="JobScope"/> whose children produce a <typeparamref name="T"/>: their results arrive in
/// completion order through <c>await foreach</c>, as Tokio's <c>JoinSet</c> and Swift's
/// <c>TaskGroup</c> deliver them.
/// </summary>
/// <example>
/// <code>
/// await using var scope = new JobScope&lt;int&gt;(runtime, maxConcurrency: 8);
/// foreach (string url in urls)
///     await scope.SpawnAsync(url, static (u, ct) => Fetch(u, ct));
/// await foreach (int length in scope)    // completion order
///     total += length;
/// </code>
/// </example>
/// <remarks>
/// <para>Everything in <see cref="JobScope"/>'s remarks holds here. The enumeration yields the result of
/// every child that succeeded, in the order they ended, and finishes once no child is live and every
/// result was yielded; then, if a child failed, it throws as awaiting the scope does. A failed or
/// canceled child yields nothing. One enumeration at a time; children spawned while it runs are
/// included.</para>
/// <para>Results nobody enumerates stay queued until the scope is collected: a result that owns
/// something (a <see cref="Coordination.JobMutex.Releaser"/>, say) must be enumerated and disposed.
/// Use <see cref="JobScope"/> for children whose results are not needed.</para>
/// </remarks>
/// <typeparam name="T">The children's result type.</typeparam>
public sealed class JobScope<T> : IAsyncDisposable, IAsyncEnumerable<T>
{
    private readonly ScopeCore<T> _core;

    /// <inheritdoc cref="JobScope(JobRuntime, int, CancellationToken)"/>
    public JobScope(JobRuntime runtime, int maxConcurrency = 0, CancellationToken cancellationToken = default)
    {
        _core = new ScopeCore<T>(runtime, maxConcurrency, collectsResults: true, cancellationToken);
    }

    /// <inheritdoc cref="JobScope.Runtime"/>
    public JobRuntime Runtime => _core.Runtime;

    /// <inheritdoc cref="JobScope.MaxConcurrency"/>
    public int MaxConcurrency => _core.MaxConcurrency;

    /// <inheritdoc cref="JobScope.CancellationToken"/>
    public CancellationToken CancellationToken => _core.Token;

    /// <inheritdoc cref="JobScope.LiveCount"/>
    public int LiveCount => _core.LiveCount;

    /// <inheritdoc cref="JobScope.Exception"/>
    public AggregateException? Exception => _core.Exception;

    /// <inheritdoc cref="JobScope.Cancel"/>
    public void Cancel() => _core.Cancel();

    /// <inheritdoc cref="JobScope.SpawnAsync{TState}(TState, Func{TState, CancellationToken, Job})"/>
    public Job SpawnAsync<TState>(TState state, Func<TState, CancellationToken, Job<T>> body)
    {
        ArgumentNullException.ThrowIfNull(body);
        return _core.SpawnAsync(state, body, s_launch<TState>.Value);
    }

    /// <inheritdoc cref="JobScope.TrySpawn{TState}(TState, Func{TState, CancellationToken, Job})"/>
    public bool TrySpawn<TState>(TState state, Func<TState, CancellationToken, Job<T>> body)
    {
        ArgumentNullException.ThrowIfNull(body);
        return _core.TrySpawn(state, body, s_launch<TState>.Value);
    }

    /// <summary>Completes when no child is live; throws the first failure. Results stay queued for the enumeration.</summary>
    public Job WaitAsync() => _core.WaitAsync(throws: true);

    /// <inheritdoc cref="JobScope.GetAwaiter"/>
    public JobAwaiter GetAwaiter() => WaitAsync().GetAwaiter();

    /// <inheritdoc cref="JobScope.DisposeAsync"/>
    public ValueTask DisposeAsync() => _core.DisposeAsync().AsValueTask();

    /// <summary>The children's results in completion order (see the type's remarks).</summary>
    /// <param name="cancellationToken">Stops waiting for the next result with <see cref="OperationCanceledException"/>
    /// (a cancelable wait allocates); the scope itself is not canceled.</param>
    /// <exception cref="InvalidOperationException">Another enumeration of this scope is running.</exception>
    public IAsyncEnumerator<T> GetAsyncEnumerator(CancellationToken cancellationToken = default)
    {
        _core.BeginEnumeration();
        return new Enumerator(_core, cancellationToken);
    }

    private sealed class Enumerator(ScopeCore<T> core, CancellationToken cancellationToken) : IAsyncEnumerator<T>
    {
        private bool _ended;

        public T Current { get; private set; } = default!;

        // Mapped where the next result arrives (Jobs/JobMap.cs says why neither an async Job nor an
        // async ValueTask method): an enumerating job resumes on its runtime straight from it.
        public ValueTask<bool> MoveNextAsync() =>
            _ended ? new ValueTask<bool>(false)
            : JobMap<(bool HasValue, T Value), bool, Enumerator>.Start(core.NextAsync(cancellationToken), this, static (e, next) => e.Advance(next), "a job scope's results (MoveNextAsync)").AsValueTask();

        private bool Advance(Job<(bool HasValue, T Value)> next)
        {
            (bool hasValue, T value) = next.GetAwaiter().GetResult();
            Current = value;
            if (!hasValue)
            {
                End();
            }

            return hasValue;
        }

        public ValueTask DisposeAsync()
        {
            End();
            return default;
        }

        private void End()
        {
            if (!_ended)
            {
                _ended = true;
                core.EndEnumeration();
            }
        }
    }

    /// <summary>As <c>JobScope.s_launch</c>: the scope's token travels in the state and is checked when the child starts.</summary>
    private static class s_launch<TState>
    {
        internal static readonly ScopeCore<T>.Launcher<TState, Func<TState, CancellationToken, Job<T>>> Value =
            static (runtime, state, body, token) =>
                runtime.Spawn(
                    (State: state, Body: body, Token: token),
                    static s => s.Token.IsCancellationRequested ? Job.FromCanceled<T>(s.Token) : s.Body(s.State, s.Token));
    }
}
