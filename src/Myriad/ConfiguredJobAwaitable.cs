using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Myriad.Jobs;

namespace Myriad;

/// <summary>An awaitable <see cref="Job"/> with a chosen context behaviour; see <see cref="Job.ConfigureAwait(bool)"/>.</summary>
[StructLayout(LayoutKind.Auto)]
public readonly struct ConfiguredJobAwaitable
{
    private readonly ConfiguredJobAwaitable<VoidResult> _inner;

    internal ConfiguredJobAwaitable(Job<VoidResult> job, bool continueOnCapturedContext) =>
        _inner = new ConfiguredJobAwaitable<VoidResult>(job, continueOnCapturedContext);

    /// <summary>Gets the awaiter for <c>await</c>.</summary>
    public Awaiter GetAwaiter() => new(_inner.GetAwaiter());

    /// <summary>The awaiter of <see cref="ConfiguredJobAwaitable"/>: the typed awaiter of the same job, without the result.</summary>
    [StructLayout(LayoutKind.Auto)]
    public readonly struct Awaiter : ICriticalNotifyCompletion, IJobAwaiter
    {
        private readonly ConfiguredJobAwaitable<VoidResult>.Awaiter _inner;

        internal Awaiter(ConfiguredJobAwaitable<VoidResult>.Awaiter inner) => _inner = inner;

        /// <summary>Whether the job has completed.</summary>
        public bool IsCompleted => _inner.IsCompleted;

        /// <summary>Consumes the job; throws its exception.</summary>
        [System.Diagnostics.StackTraceHidden]
        public void GetResult() => _inner.GetResult();

        /// <summary>Schedules the continuation, flowing the ExecutionContext.</summary>
        public void OnCompleted(Action continuation) => _inner.OnCompleted(continuation);

        /// <summary>Schedules the continuation.</summary>
        public void UnsafeOnCompleted(Action continuation) => _inner.UnsafeOnCompleted(continuation);

        JobCell? IJobAwaiter.Cell => ((IJobAwaiter)_inner).Cell;

        bool IJobAwaiter.TryOnCompleted(Internal.WorkItem continuation, Internal.PerThread state) => ((IJobAwaiter)_inner).TryOnCompleted(continuation, state);

        void IJobAwaiter.ThrowRegistrationRefused() => ((IJobAwaiter)_inner).ThrowRegistrationRefused();
    }
}

/// <summary>An awaitable <see cref="Job{T}"/> with a chosen context behaviour; see <see cref="Job.ConfigureAwait(bool)"/>.</summary>
/// <typeparam name="T">The job's result type.</typeparam>
[StructLayout(LayoutKind.Auto)]
public readonly struct ConfiguredJobAwaitable<T>
{
    private readonly Job<T> _job;
    private readonly bool _continueOnCapturedContext;

    internal ConfiguredJobAwaitable(Job<T> job, bool continueOnCapturedContext)
    {
        _job = job;
        _continueOnCapturedContext = continueOnCapturedContext;
    }

    /// <summary>Gets the awaiter for <c>await</c>.</summary>
    public Awaiter GetAwaiter() => new(_job, _continueOnCapturedContext);

    /// <summary>The awaiter of <see cref="ConfiguredJobAwaitable{T}"/>.</summary>
    [StructLayout(LayoutKind.Auto)]
    public readonly struct Awaiter : ICriticalNotifyCompletion, IJobAwaiter
    {
        private readonly Job<T> _job;
        private readonly bool _continueOnCapturedContext;

        internal Awaiter(Job<T> job, bool continueOnCapturedContext)
        {
            _job = job;
            _continueOnCapturedContext = continueOnCapturedContext;
        }

        /// <summary>Whether the job has completed.</summary>
        public bool IsCompleted => _job.IsCompleted;

        /// <summary>Consumes the job and returns its result; throws its exception.</summary>
        [System.Diagnostics.StackTraceHidden]
        public T GetResult() => _job.Wait();

        /// <summary>Schedules the continuation, flowing the ExecutionContext.</summary>
        public void OnCompleted(Action continuation) =>
            Adapters.RegisterForeign(_job._box, _job._token, continuation, flowExecutionContext: true, _continueOnCapturedContext);

        /// <summary>Schedules the continuation.</summary>
        public void UnsafeOnCompleted(Action continuation) =>
            Adapters.RegisterForeign(_job._box, _job._token, continuation, flowExecutionContext: false, _continueOnCapturedContext);

        JobCell? IJobAwaiter.Cell => _job._box;

        bool IJobAwaiter.TryOnCompleted(Internal.WorkItem continuation, Internal.PerThread state) => Adapters.TryRegister(_job._box, _job._token, continuation, state);

        void IJobAwaiter.ThrowRegistrationRefused() => _job._box!.ThrowRegistrationRefused(_job._token);
    }
}
