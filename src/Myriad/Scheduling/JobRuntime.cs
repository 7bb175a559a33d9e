using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Interop;
using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>
/// A scheduler that runs jobs: the common surface of <see cref="MultiThreadRuntime"/>,
/// <see cref="CurrentThreadRuntime"/> and <see cref="DeterministicRuntime"/>.
/// </summary>
/// <remarks>
/// <para><b>Where jobs run.</b> A job runs only on its own runtime's threads. A spawned job starts on
/// the runtime. After an <c>await</c> of another job, a <see cref="Task"/>, a <see cref="ValueTask"/>
/// or any other awaitable it resumes on its runtime: inline on the completing thread when that thread
/// is one of the runtime's and the stack is shallow (the trampoline queues deeper continuations),
/// otherwise queued to the runtime. A job started by a direct call outside any runtime belongs to
/// none and resumes on the thread that completes what it awaits. Code that is not a job never runs
/// on a runtime's thread.</para>
/// <para><b>Failures.</b> A job's exception goes to whoever awaits its handle. A detached job
/// (<see cref="SpawnDetached{TState}(TState, Func{TState, Job}, CancellationToken)"/>) has no
/// awaiter: its failures raise <see cref="UnobservedException"/> (cancellations do not).</para>
/// <para><b>Disposal</b> is described on each runtime.</para>
/// </remarks>
public abstract partial class JobRuntime : IDisposable, IAsyncDisposable
{
    private static int s_nextId;
    private static long s_nextClaimId;

    private MyriadTaskScheduler? _taskScheduler;
    private long _unobserved;
    private readonly StripedCounter _spawned = new();
    private readonly StripedCounter _completed = new();
    private int _disposed;

    /// <summary>Set once a <see cref="DisposeAsync(CancellationToken)"/> gave up waiting: later disposals stop waiting too.</summary>
    private volatile bool _drainWaitAbandoned;

    /// <summary>Completes when the winning <see cref="Dispose()"/> call has finished.</summary>
    private readonly TaskCompletionSource _disposal = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>
    /// Names the runtime. The derived constructor registers it with
    /// <see cref="Diagnostics.MyriadMetrics"/> as its last step (<see cref="RegisterMetrics"/>): a
    /// collection may run at any moment and reads <see cref="Stats"/>, which needs the derived
    /// fields, and a constructor that throws must leave nothing registered.
    /// </summary>
    private protected JobRuntime(string? name)
    {
        Name = string.IsNullOrEmpty(name) ? $"{GetType().Name}-{Interlocked.Increment(ref s_nextId)}" : name;
        Id = RuntimeRegistry.Register(this);
    }

    /// <summary>This runtime's id in <see cref="RuntimeRegistry"/>: what a suspended job records as its owner.</summary>
    internal short Id { get; }

    /// <summary>The last step of a derived constructor: from here on, metrics collections see this runtime.</summary>
    private protected void RegisterMetrics() => Diagnostics.MyriadMetrics.Register(this);

    /// <summary>
    /// A positive number of this runtime: how a spawn box queued on it marks itself (see SpawnBox).
    /// </summary>
    internal int ClaimId { get; } = ClaimIdFor(Interlocked.Increment(ref s_nextClaimId));

    /// <summary>
    /// The claim id of the <paramref name="n"/>th runtime: 1 to <see cref="int.MaxValue"/>, cycling
    /// (never 0 or below, which mean "not queued"), so two runtimes share an id only if one outlived
    /// two billion others.
    /// </summary>
    internal static int ClaimIdFor(long n) => (int)(n % int.MaxValue) + 1;

    /// <summary>The runtime's name: the <c>myriad.runtime</c> tag of its metrics.</summary>
    public string Name { get; }

    /// <summary>Failures nobody could observe so far (each also raised <see cref="UnobservedException"/>):
    /// of detached jobs, of jobs that lost a <see cref="Job.WhenAny(Job[])"/> race, of a
    /// <see cref="JobScope"/>'s children that nobody awaited, and of cancellation callbacks
    /// that threw when a scope canceled its children.</summary>
    public long UnobservedExceptionCount => Volatile.Read(ref _unobserved);

    /// <summary>A snapshot of the scheduler's queues and workers.</summary>
    public abstract Diagnostics.SchedulerStats Stats();

    /// <summary>Raised for a failure nobody can observe: a detached job's, a job's that lost a
    /// <see cref="Job.WhenAny(Job[])"/> race, a <see cref="JobScope"/> child's that nobody
    /// awaited, or a cancellation callback's that threw when a scope canceled its children. Runs on the thread that completed the job (on one of the
    /// runtime's threads when that was the runtime's watchdog, which runs no user code).</summary>
    /// <remarks>A handler should not throw. If one does, its exception is not allowed to unwind
    /// through the completing job: it is rethrown on the thread pool, where an <c>async void</c>
    /// method's exception would go (an unhandled exception, which ends the process by default).</remarks>
    public event EventHandler<UnobservedJobExceptionEventArgs>? UnobservedException;

    /// <summary>
    /// A <see cref="System.Threading.Tasks.TaskScheduler"/> that runs tasks on this runtime: start plain
    /// <c>async Task</c> code with <c>Task.Factory.StartNew(..., scheduler)</c>, and its awaits (of
    /// Tasks and of jobs alike, which capture the current scheduler as a Task await does) resume here
    /// too. Inline execution is bounded by the trampoline, so long continuation chains do not overflow
    /// the stack. A scheduler cannot cancel a task it was given: after the runtime's disposal, tasks
    /// queued here run on the .NET thread pool.
    /// </summary>
    public TaskScheduler TaskScheduler
    {
        get
        {
            MyriadTaskScheduler? scheduler = Volatile.Read(ref _taskScheduler);
            return scheduler ?? Interlocked.CompareExchange(ref _taskScheduler, new MyriadTaskScheduler(this), null) ?? _taskScheduler!;
        }
    }

    /// <summary>The number of threads that run jobs (1 for the single-threaded runtimes).</summary>
    public abstract int WorkerCount { get; }

    /// <summary>Whether <see cref="Dispose()"/> has been called.</summary>
    public bool IsDisposed => Volatile.Read(ref _disposed) != 0;

    /// <summary>Jobs spawned so far.</summary>
    public long SpawnedCount => _spawned.Sum();

    /// <summary>Spawned jobs that have completed so far.</summary>
    public long CompletedCount => _completed.Sum();

    /// <summary>Whether the calling thread is one of this runtime's scheduler threads.</summary>
    public bool IsRuntimeThread => SchedulerContext.Current?.Runtime == this;

    /// <summary>
    /// The runtime whose thread the caller runs on: inside a job, the job's own runtime (a worker of a
    /// <see cref="MultiThreadRuntime"/>, or the thread driving a single-threaded runtime); null on any
    /// other thread. Like Tokio's <c>Handle::current()</c>, it lets a job spawn siblings without
    /// threading the runtime through its state.
    /// </summary>
    public static JobRuntime? Current => SchedulerContext.Current?.Runtime;

    /// <summary>
    /// Whether the caller runs on one of this runtime's own threads, whatever scheduler context it is
    /// in now (a second <see cref="Dispose()"/> there must not wait for the workers it is one of).
    /// </summary>
    internal virtual bool OwnsCurrentThread => IsRuntimeThread;

    /// <summary>Queues an item from any thread. After the disposal finished, implementations hand the item to <see cref="WorkItem.Abandon"/> instead.</summary>
    internal abstract void Schedule(WorkItem item);

    /// <summary><see cref="Schedule(WorkItem)"/> for a caller that already holds the thread's state.</summary>
    internal virtual void Schedule(WorkItem item, PerThread state) => Schedule(item);

    /// <summary>
    /// Whether a job awaiting an unstarted spawned job of this runtime runs it inline (join
    /// helping, see <c>SpawnBox.TryHelp</c>). Not on a <see cref="DeterministicRuntime"/>: there the
    /// seed picks every next job, and helping would take that choice away from it.
    /// </summary>
    internal bool HelpsJoins => this is not DeterministicRuntime;

    /// <summary>
    /// Queues a resume that comes from outside the runtime: a Task completing on an I/O or timer
    /// thread, another runtime's worker, a plain thread's channel send. Unlike a spawn, whoever queues
    /// it will never run it, so a runtime must not defer the wake it may owe (see the lazy-wake
    /// protocol). The default is <see cref="Schedule(WorkItem, PerThread)"/>.
    /// </summary>
    internal virtual void ScheduleResume(WorkItem item, PerThread state) => Schedule(item, state);

    /// <summary>Runs an item that has no runtime (or whose runtime is gone and that may run anywhere) on the .NET thread pool.</summary>
    internal static void ScheduleAfterDisposal(WorkItem item) => Trampoline.RunOnThreadPool(item);

    /// <summary>
    /// A thread that waits for an unstarted spawned job is about to run it itself. Returns the
    /// thread's scheduler context to restore afterwards (see <see cref="SchedulerContext.Leave(SchedulerContext?)"/>).
    /// </summary>
    internal virtual SchedulerContext? EnterInlineRun(WorkItem item, PerThread state) => state.Context;

    internal void OnJobCompleted() => _completed.Increment();

    /// <summary><see cref="OnJobCompleted()"/> for a caller that holds the calling thread's state.</summary>
    internal void OnJobCompleted(PerThread state) => _completed.Increment(state);

    /// <summary>
    /// A detached job ended: reports a failure (not a cancellation) since nobody awaits it, then counts
    /// it. In that order, so that whoever sees the count sees the report too.
    /// </summary>
    internal void OnDetachedJobCompleted(Exception? error) => OnDetachedJobCompleted(error, PerThread.Current);

    /// <summary><see cref="OnDetachedJobCompleted(Exception?)"/> for a caller that holds the calling thread's state.</summary>
    internal void OnDetachedJobCompleted(Exception? error, PerThread state)
    {
        ReportDetachedFailure(error);
        OnJobCompleted(state);
    }

    /// <summary>The outcome of a job nobody awaits: a failure is reported, a success or a cancellation is not.</summary>
    internal void ReportDetachedFailure(Exception? error)
    {
        if (error is not null and not OperationCanceledException)
        {
            RaiseUnobservedException(error);
        }
    }

    /// <summary>The shared continuation of detached spawns' pending jobs (see <see cref="Scheduling.DetachedJobObserver"/>).</summary>
    internal CellObserver DetachedObserver => _detachedObserver ??= new DetachedJobObserver(this, countsSpawn: true);

    private CellObserver? _detachedObserver;

    /// <summary>The shared continuation of jobs handed over by <see cref="Detach(Job)"/>.</summary>
    private CellObserver HandedOverObserver => _handedOverObserver ??= new DetachedJobObserver(this, countsSpawn: false);

    private CellObserver? _handedOverObserver;

    internal void RaiseUnobservedException(Exception exception)
    {
        Interlocked.Increment(ref _unobserved);
        EventHandler<UnobservedJobExceptionEventArgs>? handler = UnobservedException;
        if (handler is null)
        {
            return;
        }

        if (PerThread.CurrentOrNull is { RunsNoUserCode: true })
        {
            // The watchdog completed the job (Scheduling/MultiThreadRuntime.Io.cs, WatchIo): a
            // handler that blocked there would stop the runtime's rescue of blocked workers.
            Schedule(new RaiseUnobserved(handler, this, exception));
            return;
        }

        InvokeUnobserved(handler, this, exception);
    }

    private static void InvokeUnobserved(EventHandler<UnobservedJobExceptionEventArgs> handler, JobRuntime runtime, Exception exception)
    {
        try
        {
            handler(runtime, new UnobservedJobExceptionEventArgs(exception));
        }
        catch (Exception handlerFailure)
        {
            // The handler runs inside a completion (a detached job's, or a cell observer's): its
            // exception must not unwind through the job machinery and skip the trampoline's
            // bookkeeping or complete something twice. See the event's remarks.
            ThrowHelper.ContinuationFailed(handlerFailure);
        }
    }

    /// <summary>An <see cref="UnobservedException"/> raise moved off a thread that runs no user code.</summary>
    private sealed class RaiseUnobserved(EventHandler<UnobservedJobExceptionEventArgs> handler, JobRuntime runtime, Exception exception) : WorkItem
    {
        // After the runtime's disposal, the default Abandon runs this on the thread pool: the raise still happens.
        internal override void Execute(PerThread state) => InvokeUnobserved(handler, runtime, exception);
    }

    /// <summary>
    /// Spawning is refused once disposal started, on every thread, the runtime's own included: a
    /// spawn that disposal would have to wait for, or cancel unseen, is better refused where it is
    /// made. Wake-ups of jobs that already exist are still drained (see <see cref="Dispose"/>).
    /// </summary>
    private protected void ThrowIfDisposed()
    {
        if (IsDisposed)
        {
            ThrowHelper.ThrowObjectDisposed(GetType().Name);
        }
    }

    // AggressiveOptimization here and below: optimized from the first call, so that one-shot
    // programs do not run the spawn path as tier-0 code (docs/design.md, "Cold runs").
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Job<TResult> SpawnCore<TState, TResult>(TState state, object body, SpawnBodyKind kind, CancellationToken cancellationToken)
    {
        PerThread thread = PerThread.Current;

        // Outside the spawn fence: the body may run for long, or dispose the runtime, whose disposal
        // waits for the fence. A thread that runs a job of the runtime is counted by the drain anyway.
        if (_mayStartSpawnsInline && StartsSpawnInline(thread) && TryStartInline(thread, state, body, kind, cancellationToken, out Job<TResult> started))
        {
            return started;
        }

        if (!NeedsSpawnFence(thread))
        {
            ThrowIfDisposed();
            return QueueSpawn<TState, TResult>(thread, state, body, kind, cancellationToken);
        }

        EnterSpawnFence();
        try
        {
            return QueueSpawn<TState, TResult>(thread, state, body, kind, cancellationToken);
        }
        finally
        {
            ExitSpawnFence();
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Job<TResult> QueueSpawn<TState, TResult>(PerThread thread, TState state, object body, SpawnBodyKind kind, CancellationToken cancellationToken)
    {
        SpawnBox<TState, TResult> box = SpawnBox<TState, TResult>.Rent(thread, this, state, body, kind, cancellationToken);
        short token = box.Version;
        _spawned.Increment(thread);
        Schedule(box, thread);
        return new Job<TResult>(box, token);
    }

    /// <summary>A spawn nobody can await: a bare queue entry (<see cref="DetachedSpawn{TState}"/>), not a completion cell.</summary>
    private void SpawnDetachedCore<TState>(TState state, object body, bool sync, CancellationToken cancellationToken)
    {
        PerThread thread = PerThread.Current;
        if (_mayStartSpawnsInline && StartsSpawnInline(thread) && TryStartDetachedInline(thread, state, body, sync, cancellationToken))
        {
            return; // see SpawnCore
        }

        if (!NeedsSpawnFence(thread))
        {
            ThrowIfDisposed();
            QueueDetached(thread, state, body, sync, cancellationToken);
            return;
        }

        EnterSpawnFence();
        try
        {
            QueueDetached(thread, state, body, sync, cancellationToken);
        }
        finally
        {
            ExitSpawnFence();
        }
    }

    private void QueueDetached<TState>(PerThread thread, TState state, object body, bool sync, CancellationToken cancellationToken)
    {
        DetachedSpawn<TState> item = DetachedSpawn<TState>.Rent(thread, this, state, body, sync, cancellationToken);
        _spawned.Increment(thread);
        Schedule(item, thread);
    }

    /// <summary>
    /// Starts <paramref name="body"/>(<paramref name="state"/>) on the runtime and returns a handle to
    /// await. Pass a <c>static</c> lambda: the state travels typed, without a closure or boxing.
    /// </summary>
    /// <remarks>The job is queued, unless the spawn is made by a job of a <see cref="MultiThreadRuntime"/>
    /// while the queue it would join holds <see cref="RuntimeOptions.SpawnInlineBacklog"/> jobs that
    /// have not started: then this thread runs the body at once, up to its first suspension, before
    /// the spawn returns. Either way the body's failures end in the job, never in this call.</remarks>
    /// <param name="state">The value the body receives.</param>
    /// <param name="body">The job's code.</param>
    /// <param name="cancellationToken">If canceled before the job starts, it ends canceled without running.
    /// To cancel a running job, carry the token in the state.</param>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The runtime was disposed.</exception>
    public Job<TResult> Spawn<TState, TResult>(TState state, Func<TState, Job<TResult>> body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        return SpawnCore<TState, TResult>(state, body, SpawnBodyKind.AsyncResult, cancellationToken);
    }

    /// <inheritdoc cref="Spawn{TState, TResult}(TState, Func{TState, Job{TResult}}, CancellationToken)"/>
    public Job Spawn<TState>(TState state, Func<TState, Job> body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        return new Job(SpawnCore<TState, VoidResult>(state, body, SpawnBodyKind.AsyncVoid, cancellationToken));
    }

    /// <summary>Runs a synchronous body with typed state on the runtime; returns a handle to await.</summary>
    /// <inheritdoc cref="Spawn{TState, TResult}(TState, Func{TState, Job{TResult}}, CancellationToken)"/>
    public Job Spawn<TState>(TState state, Action<TState> body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        return new Job(SpawnCore<TState, VoidResult>(state, body, SpawnBodyKind.SyncVoid, cancellationToken));
    }

    /// <summary>Starts a job that needs no state (the delegate itself may still be a closure).</summary>
    public Job<TResult> Spawn<TResult>(Func<Job<TResult>> body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        return Spawn(body, static b => b(), cancellationToken);
    }

    /// <inheritdoc cref="Spawn{TResult}(Func{Job{TResult}}, CancellationToken)"/>
    public Job Spawn(Func<Job> body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        return Spawn(body, static b => b(), cancellationToken);
    }

    /// <summary>
    /// Starts a job nobody will await (fire and forget). Its failure raises <see cref="UnobservedException"/>.
    /// </summary>
    /// <remarks>Queued, or run at once under a backlog, as <see cref="Spawn{TState, TResult}(TState, Func{TState, Job{TResult}}, CancellationToken)"/> describes.</remarks>
    public void SpawnDetached<TState>(TState state, Func<TState, Job> body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        SpawnDetachedCore(state, body, sync: false, cancellationToken);
    }

    /// <summary>
    /// Takes charge of a job that is already running and that nobody will await: typically one
    /// started by calling an <c>async Job</c> method directly (which runs it on the calling thread up
    /// to its first suspension, the way calling an <c>async Task</c> method does). When the job ends
    /// its pooled state is recycled, and a failure other than a cancellation raises
    /// <see cref="UnobservedException"/>. Without this, a discarded job is never recycled and its
    /// failure is lost.
    /// </summary>
    /// <remarks>Costs nothing per job: one shared observer per runtime is registered as the job's
    /// continuation. The job keeps running wherever its awaits resume it; this does not move it onto
    /// the runtime. It works on a disposed runtime too (the job still ends and is still reported).</remarks>
    /// <param name="job">The job; it is consumed (it must not be awaited afterwards).</param>
    /// <exception cref="InvalidOperationException">The job was already awaited or consumed.</exception>
    public void Detach(Job job) => Detach(job._inner);

    /// <inheritdoc cref="Detach(Job)"/>
    public void Detach<T>(Job<T> job)
    {
        if (job._box is not { } box)
        {
            return;
        }

        if (box.ConsumingRunsUserCode)
        {
            // A select's handler runs when its result is consumed: consume it inside a job of its
            // own (trampolined like any resumption), whose failure, the handler's included, is
            // then reported like any other.
            Detach(Adapters.Discard(job));
            return;
        }

        box.OnCompleted(HandedOverObserver, job._token);
    }

    /// <summary>
    /// Starts a job that needs no state and that nobody will await (fire and forget); the delegate
    /// itself may still be a closure. Its failure raises <see cref="UnobservedException"/>.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is null.</exception>
    public void SpawnDetached(Func<Job> body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        SpawnDetached(body, static b => b(), cancellationToken);
    }

    /// <summary>Fire-and-forget form of the synchronous spawn.</summary>
    public void SpawnDetached<TState>(TState state, Action<TState> body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        SpawnDetachedCore(state, body, sync: true, cancellationToken);
    }

    /// <summary>
    /// Blocking entry from ordinary code: runs the job on this runtime and waits for its result. If no
    /// worker has picked it up yet, the calling thread runs it itself.
    /// </summary>
    public TResult Run<TState, TResult>(TState state, Func<TState, Job<TResult>> body, CancellationToken cancellationToken = default)
        => Spawn(state, body, cancellationToken).Wait();

    /// <inheritdoc cref="Run{TState, TResult}(TState, Func{TState, Job{TResult}}, CancellationToken)"/>
    public void Run<TState>(TState state, Func<TState, Job> body, CancellationToken cancellationToken = default)
        => Spawn(state, body, cancellationToken).Wait();

    /// <inheritdoc cref="Run{TState, TResult}(TState, Func{TState, Job{TResult}}, CancellationToken)"/>
    public TResult Run<TResult>(Func<Job<TResult>> body, CancellationToken cancellationToken = default)
        => Spawn(body, cancellationToken).Wait();

    /// <inheritdoc cref="Run{TState, TResult}(TState, Func{TState, Job{TResult}}, CancellationToken)"/>
    public void Run(Func<Job> body, CancellationToken cancellationToken = default)
        => Spawn(body, cancellationToken).Wait();

    /// <summary>
    /// Stops the runtime; see the derived type for what happens to queued jobs. Every call returns
    /// only once disposal is complete, also when another thread started it, except on one of the
    /// runtime's own threads, which cannot wait for the workers it is one of.
    /// </summary>
    /// <remarks>A runtime stays registered (its id, its metrics series) until it is disposed, even
    /// when nothing references it any more: dispose every runtime you create. At most 32,767
    /// runtimes can exist undisposed at once.</remarks>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            RunDisposal();
        }
        else if (!OwnsCurrentThread && !_drainWaitAbandoned)
        {
            // A later caller expects the drain the first call promises (a using block racing a
            // shutdown hook, say). A worker cannot wait for it: the drain ends only when every
            // worker, this one included, has left its loop.
            _disposal.Task.GetAwaiter().GetResult();
        }

        GC.SuppressFinalize(this);
    }

    /// <summary>The disposal proper, by the caller that set <c>_disposed</c>.</summary>
    private void RunDisposal()
    {
        try
        {
            Diagnostics.MyriadMetrics.Unregister(this);
            DisposeCore();
        }
        catch
        {
            CompleteDisposal(); // nobody may wait forever on a disposal that failed
            throw;
        }
    }

    /// <summary>
    /// Stops the runtime without blocking the caller's thread; completes when disposal is complete.
    /// Called from one of the runtime's own jobs, it does what <see cref="Dispose()"/> does there
    /// and completes at once: the job goes on and ends as part of the drain (a job that waited for
    /// the disposal to complete would wait for the end of its own runtime, and could only resume
    /// canceled).
    /// </summary>
    public ValueTask DisposeAsync()
    {
        if (OwnsCurrentThread)
        {
            Dispose();
            return default;
        }

        // The runtime counts as disposed before this returns, as after Dispose (a spawn from here on
        // throws ObjectDisposedException); only the drain and the wait for it move off the caller.
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return _drainWaitAbandoned ? default : new ValueTask(_disposal.Task);
        }

        return new ValueTask(Task.Factory.StartNew(
            static r =>
            {
                var runtime = (JobRuntime)r!;
                runtime.RunDisposal();
                GC.SuppressFinalize(runtime);
            },
            this,
            CancellationToken.None,
            TaskCreationOptions.DenyChildAttach | TaskCreationOptions.LongRunning,
            TaskScheduler.Default));
    }

    /// <summary>
    /// Stops the runtime, as <see cref="DisposeAsync()"/> does, and waits for the disposal until
    /// <paramref name="cancellationToken"/> fires: a host's shutdown timeout, say, when a job ignores
    /// its cancellation and the drain would never end.
    /// </summary>
    /// <remarks>
    /// Giving up does not stop the disposal: it goes on in the background (the runtime's threads
    /// are background threads, so they do not keep the process alive), and from then on every
    /// <see cref="Dispose()"/> and <see cref="DisposeAsync()"/> call returns at once instead of
    /// waiting for it. Whoever owns the runtime decided to stop waiting; a dependency-injection
    /// container disposing it afterwards must not block the process's exit.
    /// </remarks>
    /// <exception cref="OperationCanceledException">The token fired before the disposal was complete.</exception>
    public ValueTask DisposeAsync(CancellationToken cancellationToken)
    {
        ValueTask disposal = DisposeAsync();
        if (disposal.IsCompleted || !cancellationToken.CanBeCanceled)
        {
            return disposal;
        }

        return WaitForDisposal(disposal.AsTask(), cancellationToken);
    }

    private async ValueTask WaitForDisposal(Task disposal, CancellationToken cancellationToken)
    {
        try
        {
            await disposal.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested && !disposal.IsCompleted)
        {
            _drainWaitAbandoned = true;
            throw;
        }
    }

    /// <summary>
    /// Called once by <see cref="Dispose()"/>. Calls <see cref="CompleteDisposal"/> when the
    /// disposal is complete, which may be later and on another thread.
    /// </summary>
    private protected abstract void DisposeCore();

    /// <summary>Marks the disposal complete: later <see cref="Dispose()"/> calls and <see cref="DisposeAsync()"/> stop waiting.</summary>
    private protected void CompleteDisposal()
    {
        // From here on a job of this runtime that is woken finds no runtime and is canceled
        // (StateMachineBox.Redirect); before, its wake-up is still queued and drained.
        RuntimeRegistry.Release(this);
        Diagnostics.MyriadMetrics.DisposalCompleted();
        _disposal.TrySetResult();
    }
}

/// <summary>Describes a failure of a detached job that nobody observed.</summary>
public sealed class UnobservedJobExceptionEventArgs(Exception exception) : EventArgs
{
    /// <summary>The job's exception.</summary>
    public Exception Exception { get; } = exception;
}
