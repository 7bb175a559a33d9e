using System;
using Myriad.Internal;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Jobs;

namespace Myriad;

/// <summary>
/// A lightweight asynchronous operation without a result: the result type of <c>async Job</c>
/// methods. Also hosts the factory methods (<see cref="FromResult{T}(T)"/>, <see cref="WhenAll(Job[])"/>...).
/// </summary>
/// <remarks>Single-use, like <see cref="Job{T}"/>: await it exactly once. The stale-handle check is a
/// version that wraps after 32,768 reuses of one pooled cell (see
/// <see cref="Job{T}"/>).</remarks>
[AsyncMethodBuilder(typeof(JobMethodBuilder))]
public readonly partial struct Job
{
    internal readonly Job<VoidResult> _inner;

    internal Job(Job<VoidResult> inner) => _inner = inner;

    internal static Job FromUntyped(Job<VoidResult> inner) => new(inner);

    /// <summary>A job that has already completed successfully.</summary>
    public static Job CompletedJob => default;

    /// <summary>Whether the job has completed (successfully or not).</summary>
    public bool IsCompleted => _inner.IsCompleted;

    /// <summary>Whether the job has completed successfully.</summary>
    public bool IsCompletedSuccessfully => _inner.IsCompletedSuccessfully;

    /// <inheritdoc cref="Job{T}.IsFaulted"/>
    public bool IsFaulted => _inner.IsFaulted;

    /// <inheritdoc cref="Job{T}.IsCanceled"/>
    public bool IsCanceled => _inner.IsCanceled;

    /// <summary>Gets the awaiter for <c>await</c>.</summary>
    public JobAwaiter GetAwaiter() => new(_inner);

    /// <summary>
    /// Configures how code that is not a job resumes after awaiting this job, with the meaning of
    /// <see cref="Task.ConfigureAwait(bool)"/>: <see langword="true"/> (the default of a plain
    /// <c>await</c>) resumes on the captured <see cref="System.Threading.SynchronizationContext"/> or
    /// non-default <see cref="TaskScheduler"/>; <see langword="false"/> does not capture them. Either way
    /// such code never resumes on a runtime's thread: with nothing captured it continues on the thread
    /// that completed the job if that thread belongs to no runtime, and on the .NET thread pool
    /// otherwise. Inside an <c>async Job</c> method the setting has no effect: a job always resumes on
    /// its own runtime.
    /// </summary>
    public ConfiguredJobAwaitable ConfigureAwait(bool continueOnCapturedContext) => new(_inner, continueOnCapturedContext);

    /// <summary>Blocks until the job completes (consuming it); see <see cref="Job{T}.Wait"/>.</summary>
    public void Wait() => _inner.Wait();

    /// <inheritdoc cref="Job{T}.WaitAsync(CancellationToken)"/>
    public Job WaitAsync(CancellationToken cancellationToken) =>
        new(WaitAsyncCore(_inner, Timeout.InfiniteTimeSpan, null, cancellationToken));

    /// <inheritdoc cref="Job{T}.WaitAsync(TimeSpan, CancellationToken)"/>
    public Job WaitAsync(TimeSpan timeout, CancellationToken cancellationToken = default) =>
        new(WaitAsyncCore(_inner, timeout, null, cancellationToken));

    /// <inheritdoc cref="Job{T}.WaitAsync(TimeSpan, TimeProvider, CancellationToken)"/>
    public Job WaitAsync(TimeSpan timeout, TimeProvider timeProvider, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(timeProvider);
        return new(WaitAsyncCore(_inner, timeout, timeProvider, cancellationToken));
    }

    /// <summary>A <see cref="ValueTask"/> over the same state, without allocation. Consumes the job.</summary>
    /// <exception cref="InvalidOperationException">The job was consumed already, or is awaited
    /// elsewhere (its <see cref="AsTask"/> was taken, say).</exception>
    public ValueTask AsValueTask() => _inner._box switch
    {
        null => default,
        SourceBox<VoidResult> source => new ValueTask(source.ForValueTask(_inner._token), _inner._token),
        _ => new Job(Adapters.Forward(_inner)).AsValueTask(),
    };

    /// <summary>A <see cref="Task"/> that completes with the job. Consumes the job.</summary>
    public Task AsTask() =>
        _inner._box is not { } box || box.IsCompletedNoThrow(_inner._token) ? AsValueTask().AsTask()
        : box.ConsumingRunsUserCode || box.OwnerRuntime is Scheduling.SingleThreadRuntime ? _inner.AsTask() // a select's handler, or a blocking wait that can drive the runtime (see Job<T>.AsTask)
        : Interop.TaskBridge<VoidResult>.Untyped(_inner);

    /// <summary>A completed job with a result; allocates nothing.</summary>
    public static Job<T> FromResult<T>(T result) => new(result);

    /// <summary>A job that failed with <paramref name="exception"/>.</summary>
    /// <remarks>An <see cref="OperationCanceledException"/> makes a canceled job (<see cref="IsCanceled"/>),
    /// as it does when thrown from an <c>async</c> method; <see cref="Task.FromException(Exception)"/>
    /// would make a faulted task of it.</remarks>
    public static Job FromException(Exception exception) => new(FromException<VoidResult>(exception));

    /// <summary>A job of <typeparamref name="T"/> that failed with <paramref name="exception"/>.</summary>
    /// <remarks><inheritdoc cref="FromException(Exception)" path="/remarks"/></remarks>
    public static Job<T> FromException<T>(Exception exception)
    {
        PooledBox<T> box = PooledBox<T>.Faulted(exception);
        return new Job<T>(box, box.Version);
    }

    /// <summary>A job canceled by <paramref name="cancellationToken"/>, which must be canceled.</summary>
    public static Job FromCanceled(CancellationToken cancellationToken) => new(FromCanceled<VoidResult>(cancellationToken));

    /// <summary>A job of <typeparamref name="T"/> canceled by <paramref name="cancellationToken"/>, which must be canceled.</summary>
    public static Job<T> FromCanceled<T>(CancellationToken cancellationToken)
    {
        if (!cancellationToken.IsCancellationRequested)
        {
            throw new ArgumentOutOfRangeException(nameof(cancellationToken), "The token must be canceled.");
        }

        return FromException<T>(ThrowHelper.Canceled(cancellationToken));
    }
}

/// <summary>The awaiter of <see cref="Job"/>.</summary>
public readonly struct JobAwaiter : ICriticalNotifyCompletion, IJobAwaiter
{
    private readonly Job<VoidResult> _job;

    internal JobAwaiter(Job<VoidResult> job) => _job = job;

    /// <summary>Whether the job has completed; as <see cref="JobAwaiter{T}.IsCompleted"/>, a spawned job not started yet is run here first when awaited from a job of its runtime.</summary>
    public bool IsCompleted => _job._box is not { } box || box.IsCompleted(_job._token) || JobCell.HelpThenCheck(box, _job._token);

    /// <summary>Consumes the job; throws its exception.</summary>
    [System.Diagnostics.StackTraceHidden]
    public void GetResult()
    {
        if (_job._box is not null)
        {
            _job._box.GetResult(_job._token);
        }
    }

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
