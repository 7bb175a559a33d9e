using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Interop;
using Myriad.Jobs;
using Myriad.Scheduling;

namespace Myriad;

/// <summary>
/// A lightweight asynchronous operation that produces a <typeparamref name="T"/>: the result type of
/// <c>async Job&lt;T&gt;</c> methods.
/// </summary>
/// <remarks>
/// <para>Like <see cref="ValueTask{TResult}"/>, a job is a single-use handle: await it (or read its
/// result) exactly once. Awaiting it twice, or reading its result after its pooled state was reused,
/// throws <see cref="InvalidOperationException"/>. Use <see cref="AsTask"/> to share a result among
/// several consumers. The check compares a version, much as <see cref="ValueTask{TResult}"/>'s
/// 16-bit token does: it wraps after 32,768
/// reuses of one pooled cell, so a stale handle kept that long reads another operation's result
/// instead of throwing.</para>
/// <para>A job that completed synchronously carries its result inline and allocates nothing. A job
/// that suspended points at pooled state that returns to its pool once the result is consumed.</para>
/// <para>A job awaiting a job resumes on its own runtime: on the thread that completes the awaited
/// job (inline while the stack is shallow, through the trampoline otherwise) when that thread is one
/// of its runtime's, queued to its runtime otherwise. Code that is not a job (an <c>async Task</c>
/// method) resumes as after awaiting a <c>Task</c>: on its captured
/// <see cref="System.Threading.SynchronizationContext"/> unless <see cref="ConfigureAwait"/> says
/// otherwise, and never on a runtime's thread.</para>
/// </remarks>
[AsyncMethodBuilder(typeof(JobMethodBuilder<>))]
[StructLayout(LayoutKind.Auto)]
public readonly struct Job<T>
{
    internal readonly JobBox<T>? _box;
    internal readonly T _result;
    internal readonly short _token;

    /// <summary>A job already completed with <paramref name="result"/>.</summary>
    public Job(T result)
    {
        _box = null;
        _result = result;
        _token = 0;
    }

    internal Job(JobBox<T> box, short token)
    {
        _box = box;
        _result = default!;
        _token = token;
    }

    /// <summary>Whether the job has completed (successfully or not).</summary>
    public bool IsCompleted => _box is null || _box.IsCompleted(_token);

    /// <summary>Whether the job has completed successfully.</summary>
    public bool IsCompletedSuccessfully => _box is null || (_box.IsCompleted(_token) && _box.ErrorUnchecked is null);

    /// <summary>Whether the job has completed with an exception other than an <see cref="OperationCanceledException"/>, as <see cref="ValueTask{TResult}.IsFaulted"/>.</summary>
    public bool IsFaulted => _box is not null && _box.IsCompleted(_token) && _box.ErrorUnchecked is { } error && error is not OperationCanceledException;

    /// <summary>
    /// Whether the job has completed with an <see cref="OperationCanceledException"/>, as
    /// <see cref="ValueTask{TResult}.IsCanceled"/>. Every failure of that type counts, however it came
    /// (a token, <see cref="Job.FromCanceled{T}"/>, or the exception thrown or passed to
    /// <see cref="Job.FromException{T}"/>), as for an <c>async Task</c> method that throws it.
    /// </summary>
    public bool IsCanceled => _box is not null && _box.IsCompleted(_token) && _box.ErrorUnchecked is OperationCanceledException;

    /// <summary>Gets the awaiter for <c>await</c>.</summary>
    // AggressiveOptimization here and below: optimized from the first call, so that one-shot
    // programs do not run the spawn path as tier-0 code (docs/design.md, "Cold runs").
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public JobAwaiter<T> GetAwaiter() => new(this);

    /// <inheritdoc cref="Job.ConfigureAwait(bool)"/>
    public ConfiguredJobAwaitable<T> ConfigureAwait(bool continueOnCapturedContext) => new(this, continueOnCapturedContext);

    /// <summary>
    /// Blocks until the job completes and returns its result (consuming the job). On a Myriad worker
    /// the thread keeps running other jobs while it waits; a spawned job that has not started yet is
    /// run on the calling thread.
    /// </summary>
    public T Wait() => _box is null ? _result : _box.GetResult(_token);

    /// <summary>
    /// A job that completes as this one does, or fails with <see cref="OperationCanceledException"/>
    /// when <paramref name="cancellationToken"/> fires first, as <see cref="Task{TResult}.WaitAsync(CancellationToken)"/>.
    /// </summary>
    /// <remarks><inheritdoc cref="WaitAsync(TimeSpan, TimeProvider, CancellationToken)" path="/remarks"/></remarks>
    /// <param name="cancellationToken">Ends the wait (not the job) with <see cref="OperationCanceledException"/>.</param>
    /// <exception cref="InvalidOperationException">This handle was already consumed.</exception>
    public Job<T> WaitAsync(CancellationToken cancellationToken) =>
        Job.WaitAsyncCore(this, Timeout.InfiniteTimeSpan, null, cancellationToken);

    /// <summary>
    /// A job that completes as this one does, or fails with <see cref="TimeoutException"/> when
    /// <paramref name="timeout"/> passes first (or with <see cref="OperationCanceledException"/> when
    /// <paramref name="cancellationToken"/> fires first), as <see cref="Task{TResult}.WaitAsync(TimeSpan, CancellationToken)"/>.
    /// The timeout runs on the clock of the runtime this is called on, as <see cref="Job.Delay(TimeSpan, CancellationToken)"/>
    /// does (virtual time on a <see cref="DeterministicRuntime"/>).
    /// </summary>
    /// <remarks><inheritdoc cref="WaitAsync(TimeSpan, TimeProvider, CancellationToken)" path="/remarks"/></remarks>
    /// <param name="timeout">How long to wait: <see cref="Timeout.InfiniteTimeSpan"/> for no limit; zero fails at once unless the job has completed.</param>
    /// <param name="cancellationToken">Ends the wait (not the job) with <see cref="OperationCanceledException"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (other than
    /// infinite) or longer than about 49.7 days.</exception>
    /// <exception cref="InvalidOperationException">This handle was already consumed.</exception>
    public Job<T> WaitAsync(TimeSpan timeout, CancellationToken cancellationToken = default) =>
        Job.WaitAsyncCore(this, timeout, null, cancellationToken);

    /// <summary>
    /// As <see cref="WaitAsync(TimeSpan, CancellationToken)"/>, with <paramref name="timeout"/> measured
    /// by <paramref name="timeProvider"/>.
    /// </summary>
    /// <remarks>
    /// <para>This consumes the job, as awaiting it would: await the returned job instead. A job that
    /// has completed already is returned as it is, and so is one given neither a finite timeout nor a
    /// cancelable token. The wait ends early, the job does not: it runs on, and when it ends after the
    /// timeout or the cancellation, its outcome has no awaiter left, so a failure other than a
    /// cancellation raises <see cref="JobRuntime.UnobservedException"/> (for a job of no runtime,
    /// <see cref="TaskScheduler.UnobservedTaskException"/>) and a result that implements
    /// <see cref="IDisposable"/> (a <see cref="Coordination.JobMutex.Releaser"/>) is disposed, as a
    /// <see cref="Job.WhenAny{T}(Job{T}[])"/> loser's. To stop the work itself, give it a token: a
    /// channel receive or a select bounded this way stays queued after the timeout and takes the next
    /// item, which then goes nowhere; bound those with their own token or <c>Select.Timeout</c>.</para>
    /// <para>A pending wait holds a promise, a timer entry and a registration on the token; whichever of
    /// the job, the timer and the token ends the wait takes the timer out of its wheel and the
    /// registration off the token as it does. A wait started on a runtime that is then disposed
    /// ends when its job does (a job abandoned by the disposal ends canceled), or at its timeout.</para>
    /// </remarks>
    /// <param name="timeout">How long to wait: <see cref="Timeout.InfiniteTimeSpan"/> for no limit; zero fails at once unless the job has completed.</param>
    /// <param name="timeProvider">The clock that measures <paramref name="timeout"/>.</param>
    /// <param name="cancellationToken">Ends the wait (not the job) with <see cref="OperationCanceledException"/>.</param>
    /// <exception cref="ArgumentNullException"><paramref name="timeProvider"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (other than
    /// infinite) or longer than about 49.7 days.</exception>
    /// <exception cref="InvalidOperationException">This handle was already consumed.</exception>
    public Job<T> WaitAsync(TimeSpan timeout, TimeProvider timeProvider, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(timeProvider);
        return Job.WaitAsyncCore(this, timeout, timeProvider, cancellationToken);
    }

    /// <summary>A <see cref="ValueTask{TResult}"/> over the same state, without allocation. Consumes the job.</summary>
    /// <exception cref="InvalidOperationException">The job was consumed already, or is awaited
    /// elsewhere (its <see cref="AsTask"/> was taken, say).</exception>
    public ValueTask<T> AsValueTask() => _box switch
    {
        null => new ValueTask<T>(_result),
        SourceBox<T> source => new ValueTask<T>(source.ForValueTask(_token), _token),
        _ => Adapters.Forward(this).AsValueTask(),
    };

    /// <summary>A <see cref="Task{TResult}"/> that completes with the job; allocates unless completed. Consumes the job.</summary>
    /// <remarks>
    /// Awaiting the task behaves as awaiting any <see cref="Task{TResult}"/>: the continuation runs
    /// in the awaiter's captured context, never on a Myriad runtime thread. The task of a pending job
    /// runs its continuations asynchronously (as a <see cref="TaskCompletionSource{TResult}"/> created
    /// with <see cref="TaskCreationOptions.RunContinuationsAsynchronously"/>): a job that awaits it
    /// resumes on its own runtime, on a <see cref="DeterministicRuntime"/> at a step the seed picks,
    /// and other code on its captured context or the .NET thread pool. For a pending job of a
    /// <see cref="CurrentThreadRuntime"/> or <see cref="DeterministicRuntime"/>, an untimed blocking
    /// wait on the task (<c>Wait()</c>, <c>Result</c>, <c>GetAwaiter().GetResult()</c>) drives the
    /// runtime on the waiting thread until the job completes, and throws
    /// <see cref="InvalidOperationException"/> on the thread that already drives it, where the job
    /// could never complete. A timed wait (<c>Wait(TimeSpan)</c>) does not drive.
    /// The task of a pending select (<see cref="Channels.SelectBuilder.AsJob{T}"/>) taken inside a job
    /// completes only after its handler ran in a job of that job's runtime: a blocking wait on it from
    /// that runtime's thread waits for the runtime, as for any of its jobs.
    /// </remarks>
    public Task<T> AsTask() =>
        _box is not { } box || box.IsCompletedNoThrow(_token) ? AsValueTask().AsTask()
        : box.ConsumingRunsUserCode ? ConsumedInJobForTask(this)
        : box.OwnerRuntime is SingleThreadRuntime single ? DrivenTask.Create(this, single) // a blocking wait on it can drive the runtime
        : TaskBridge<T>.Typed(this);

    /// <summary>
    /// <see cref="AsTask"/> of a pending select: its handler runs when the result is consumed, which
    /// must happen in a job of the caller's runtime (<see cref="Adapters.ConsumeForTask{T}"/>), not
    /// where the select completes. Off every runtime (a plain thread) there is no such job to run
    /// it in, and the task's own continuation consumes it, as for any <c>ValueTask</c>: the handler
    /// then runs on the thread pool (or inline on a plain completer's thread), never on a runtime's thread.
    /// </summary>
    private static Task<T> ConsumedInJobForTask(Job<T> job) =>
        SchedulerContext.Current is null ? job.AsValueTask().AsTask() : Adapters.ConsumeForTask(job).AsTask();

    /// <summary>This job without its result.</summary>
    public Job AsJob() => _box is null ? Job.CompletedJob : Job.FromUntyped(Jobs.Adapters.Discard(this));

    /// <summary>Wraps a result in a completed job.</summary>
    public static implicit operator Job<T>(T result) => new(result);
}

/// <summary>The awaiter of <see cref="Job{T}"/>.</summary>
public readonly struct JobAwaiter<T> : ICriticalNotifyCompletion, IJobAwaiter
{
    private readonly Job<T> _job;

    internal JobAwaiter(Job<T> job) => _job = job;

    /// <summary>
    /// Whether the job has completed. A spawned job that has not started yet, awaited from a job
    /// of the same runtime, is run right here first (join helping), so the awaiting job need not
    /// suspend behind it.
    /// </summary>
    public bool IsCompleted
    {
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
        get => _job._box is not { } box || box.IsCompleted(_job._token) || JobCell.HelpThenCheck(box, _job._token);
    }

    /// <summary>The result (consumes the job); throws the job's exception.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    [System.Diagnostics.StackTraceHidden]
    public T GetResult() => _job._box is null ? _job._result : _job._box.GetResult(_job._token);

    /// <summary>Schedules the continuation of code that is not a job, flowing the ExecutionContext; it resumes on the captured SynchronizationContext or TaskScheduler, as after awaiting a Task (see <see cref="Job.ConfigureAwait"/>).</summary>
    public void OnCompleted(Action continuation)
    {
        Adapters.RegisterForeign(_job._box, _job._token, continuation, flowExecutionContext: true, continueOnCapturedContext: true);
    }

    /// <summary>Schedules the continuation of code that is not a job; it resumes on the captured SynchronizationContext or TaskScheduler, as after awaiting a Task.</summary>
    public void UnsafeOnCompleted(Action continuation)
    {
        Adapters.RegisterForeign(_job._box, _job._token, continuation, flowExecutionContext: false, continueOnCapturedContext: true);
    }

    JobCell? IJobAwaiter.Cell => _job._box;

    bool IJobAwaiter.TryOnCompleted(Internal.WorkItem continuation, Internal.PerThread state) => Adapters.TryRegister(_job._box, _job._token, continuation, state);

    void IJobAwaiter.ThrowRegistrationRefused() => _job._box!.ThrowRegistrationRefused(_job._token);
}
