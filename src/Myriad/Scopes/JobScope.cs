using System;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Jobs;
using Myriad.Scheduling;

namespace Myriad;

/// <summary>
/// A group of child jobs that fail together and never outlive the group: Go's <c>errgroup.Group</c>
/// (with <c>SetLimit</c>), Swift's <c>TaskGroup</c>, Kotlin's <c>coroutineScope</c>, Trio's nursery.
/// Works on every runtime. On a single-threaded runtime, wait for the scope from one of its jobs
/// (or through its <c>Run</c>): <c>scope.WaitAsync().Wait()</c> on another thread belongs to no
/// runtime, drives nothing, and waits for good (see "Interop: where code runs" in docs/guide.md).
/// </summary>
/// <example>
/// <code>
/// await using var scope = new JobScope(runtime, maxConcurrency: 4, cancellationToken);
/// foreach (string path in paths)
///     await scope.SpawnAsync(path, static async (p, ct) => await Process(p, ct));
/// await scope;   // every child ended; throws the first failure
/// </code>
/// </example>
/// <remarks>
/// <para><b>Children</b> are spawned on <see cref="Runtime"/> with typed state and the scope's
/// <see cref="CancellationToken"/>, which a child should pass to what it awaits. A child costs what a
/// plain <see cref="JobRuntime.Spawn{TState}(TState, Func{TState, Job}, CancellationToken)"/> costs: the
/// scope observes it without a per-child object.</para>
/// <para><b>Failures.</b> The first child that fails (with an exception other than
/// <see cref="OperationCanceledException"/>) cancels the token, so the others stop. Awaiting the scope
/// completes once no child is live; it throws the first failure, as awaiting <c>Task.WhenAll</c> does,
/// and <see cref="Job.GetAllFailures"/> (or <see cref="Exception"/>) reaches all of them. With no
/// failure but a canceled child it throws <see cref="OperationCanceledException"/>.</para>
/// <para><b>Leaving</b> the scope (<c>await using</c>, <see cref="DisposeAsync"/>) cancels the token and
/// waits for every child: no child outlives its scope (a child that ignores the token keeps the
/// disposal waiting). It does not throw the children's failures; a failure nobody observed by awaiting
/// the scope raises <see cref="JobRuntime.UnobservedException"/> instead.</para>
/// <para><b>Limit.</b> With <c>maxConcurrency</c> above 0, at most that many children run at once:
/// <see cref="SpawnAsync{TState}"/> waits for a free slot (as errgroup's <c>Go</c> does after
/// <c>SetLimit</c>). A child that spawns into its own limited scope and waits for that spawn can
/// deadlock once every slot is held by such a waiter, as in Go.</para>
/// <para><b>Nesting.</b> Pass a scope's <see cref="CancellationToken"/> (a child receives it) to an
/// inner scope's constructor: cancelling the outer scope cancels the inner one.</para>
/// </remarks>
public sealed class JobScope : IAsyncDisposable
{
    private readonly ScopeCore<VoidResult> _core;

    /// <summary>Creates a scope whose children run on <paramref name="runtime"/>.</summary>
    /// <param name="runtime">The runtime the children are spawned on.</param>
    /// <param name="maxConcurrency">At most this many children run at once; 0 for no limit.</param>
    /// <param name="cancellationToken">Cancels the scope (and so every child) when it fires: a parent scope's token, say.</param>
    /// <exception cref="ArgumentNullException"><paramref name="runtime"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrency"/> is negative.</exception>
    public JobScope(JobRuntime runtime, int maxConcurrency = 0, CancellationToken cancellationToken = default)
    {
        _core = new ScopeCore<VoidResult>(runtime, maxConcurrency, collectsResults: false, cancellationToken);
    }

    /// <summary>The runtime the children run on.</summary>
    public JobRuntime Runtime => _core.Runtime;

    /// <summary>The most children that run at once; 0 for no limit.</summary>
    public int MaxConcurrency => _core.MaxConcurrency;

    /// <summary>Canceled by the first failure, by <see cref="Cancel"/>, by the token the scope was created with, and on leaving the scope.</summary>
    public CancellationToken CancellationToken => _core.Token;

    /// <summary>Children spawned and not yet ended.</summary>
    public int LiveCount => _core.LiveCount;

    /// <summary>Every failure so far, in the order the children ended (as <see cref="Task.Exception"/>); null if none.</summary>
    public AggregateException? Exception => _core.Exception;

    /// <summary>Cancels the scope's token: running children should stop, children not started yet end canceled.</summary>
    public void Cancel() => _core.Cancel();

    /// <summary>
    /// Spawns <paramref name="body"/>(<paramref name="state"/>, <see cref="CancellationToken"/>) as a
    /// child; with a limit, first waits for a free slot. Await the result before the next spawn.
    /// </summary>
    /// <returns>A job that completes once the child was spawned (queued on the runtime: at once without
    /// a limit or with a free slot, allocating nothing then). A spawned child whose body has not
    /// started when the scope is canceled ends canceled without running it, as a
    /// <c>Task.Run(body, canceledToken)</c> does: do not hand it anything only its body would release.
    /// If the scope is canceled before the spawn, no child is spawned and this job ends with
    /// the scope's first failure when a child's failure canceled it (the exception awaiting the scope
    /// throws), else with <see cref="OperationCanceledException"/>: a spawning loop stops with the
    /// scope, with the exception that stopped it, also while it waits for a slot.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The scope was left (through the returned job).</exception>
    public Job SpawnAsync<TState>(TState state, Func<TState, CancellationToken, Job> body)
    {
        ArgumentNullException.ThrowIfNull(body);
        return _core.SpawnAsync(state, body, s_launch<TState>.Value);
    }

    /// <summary>Spawns a child only if a slot is free now (errgroup's <c>TryGo</c>); true if it was started.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is null.</exception>
    /// <exception cref="OperationCanceledException">The scope is canceled by its token (a child that ends
    /// canceled does not cancel the scope); when a child's failure canceled it, that failure is thrown instead.</exception>
    /// <exception cref="ObjectDisposedException">The scope was left.</exception>
    public bool TrySpawn<TState>(TState state, Func<TState, CancellationToken, Job> body)
    {
        ArgumentNullException.ThrowIfNull(body);
        return _core.TrySpawn(state, body, s_launch<TState>.Value);
    }

    /// <summary>
    /// Completes when no child is live; throws the first failure (see the type's remarks). May be
    /// awaited again after more spawns.
    /// </summary>
    public Job WaitAsync() => _core.WaitAsync(throws: true);

    /// <summary>Awaits <see cref="WaitAsync"/>: <c>await scope;</c>.</summary>
    public JobAwaiter GetAwaiter() => WaitAsync().GetAwaiter();

    /// <summary>Leaves the scope: cancels it and waits for every child (see the type's remarks). Never throws the children's failures.</summary>
    public ValueTask DisposeAsync() => _core.DisposeAsync().AsValueTask();

    /// <summary>
    /// One cached static delegate per state type: a child's spawn allocates no closure. The scope's
    /// token travels in the state, and the body checks it before it starts (a child of a canceled
    /// scope ends canceled without running); passed to <c>Spawn</c> as well, it would cost every
    /// child a second object (see <see cref="Scheduling.SpawnStartExtras"/>).
    /// </summary>
    private static class s_launch<TState>
    {
        internal static readonly ScopeCore<VoidResult>.Launcher<TState, Func<TState, CancellationToken, Job>> Value =
            static (runtime, state, body, token) =>
                runtime.Spawn(
                    (State: state, Body: body, Token: token),
                    static s => s.Token.IsCancellationRequested ? Job.FromCanceled(s.Token) : s.Body(s.State, s.Token))._inner;
    }
}
