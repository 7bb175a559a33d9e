using System;
using System.ComponentModel;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>The async method builder of <see cref="Job{T}"/>. Used by the compiler; not for direct use.</summary>
/// <remarks>
/// <para>Synchronous completion: the result stays in this struct and <see cref="Task"/> wraps it in
/// a <see cref="Job{T}"/> with no box (0 bytes). First suspension: the state machine moves into a
/// pooled <see cref="StateMachineBox{TStateMachine,T}"/>, which is also registered directly as the
/// awaited job's continuation (no delegate, no allocation in steady state).</para>
/// <para><see cref="Start{TStateMachine}"/> consults the <see cref="Trampoline"/>: when the stack is
/// already deep it does not run the method at all but defers its first step, so unbounded async
/// recursion never overflows the stack.</para>
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public struct JobMethodBuilder<T>
{
    private JobBox<T>? _box;
    private T _result;

    /// <summary>Creates a builder.</summary>
    public static JobMethodBuilder<T> Create() => default;

    /// <summary>The job this method returns.</summary>
    public Job<T> Task => _box is null ? new Job<T>(_result) : new Job<T>(_box, _box.Version);

    /// <summary>Runs the method's first step, inline when the stack allows it.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Start<TStateMachine>(ref TStateMachine stateMachine) where TStateMachine : IAsyncStateMachine
    {
        if (Trampoline.TryEnter(out PerThread state, out int previous))
        {
            // Restores the caller's ExecutionContext and SynchronizationContext after the
            // synchronous part, exactly as the BCL's Start does for an async Task method. The
            // direct path has no finally block (it measurably slows the synchronous path): a
            // compiler-generated MoveNext catches the method body's exceptions, and every
            // continuation it can run inline through SetResult either is Myriad's own (which never
            // throws) or is guarded by Trampoline.InvokeForeign / ForeignContinuation, which send
            // its exception to ThrowHelper.ContinuationFailed. So nothing unwinds past MoveNext.
            if (ExecutionContextHelper.Direct)
            {
                StartDirect(ref stateMachine, state, previous);
            }
            else
            {
                try
                {
                    default(AsyncTaskMethodBuilder).Start(ref stateMachine);
                }
                finally
                {
                    Trampoline.Exit(state, previous);
                }
            }
        }
        else
        {
            StateMachineBox<TStateMachine, T> box = GetBox(ref stateMachine, state);
            box.CaptureContext(state);
            Trampoline.Defer(state, box);
        }
    }

    /// <summary>
    /// The BCL's <c>AsyncMethodBuilderCore.Start</c> with the thread taken from <see cref="PerThread"/>
    /// instead of a second thread-static lookup (see <see cref="ExecutionContextHelper"/>), followed
    /// by the trampoline's exit. Changes of the execution context are undone through the public
    /// <see cref="ExecutionContext.Restore"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void StartDirect<TStateMachine>(ref TStateMachine stateMachine, PerThread state, int previousDepth) where TStateMachine : IAsyncStateMachine
    {
        Thread thread = state.Thread;
        ExecutionContext? previousContext = ExecutionContextHelper.Peek(thread);
        SynchronizationContext? previousSync = ExecutionContextHelper.SyncContextOf(thread);
        stateMachine.MoveNext();
        ref SynchronizationContext? sync = ref ExecutionContextHelper.SyncContextOf(thread);
        if (!ReferenceEquals(sync, previousSync))
        {
            sync = previousSync;
        }

        if (!ReferenceEquals(ExecutionContextHelper.Peek(thread), previousContext))
        {
            ExecutionContext.Restore(previousContext ?? ExecutionContextHelper.Default);
        }

        Trampoline.Exit(state, previousDepth);
    }

    /// <summary>Not used: boxing is done by the builder itself.</summary>
    public void SetStateMachine(IAsyncStateMachine stateMachine) => ArgumentNullException.ThrowIfNull(stateMachine);

    /// <summary>Completes the job with a result.</summary>
    public void SetResult(T result)
    {
        if (_box is null)
        {
            _result = result;
        }
        else
        {
            _box.SetResult(result);
        }
    }

    /// <summary>Completes the job with an exception (cancellation included).</summary>
    public void SetException(Exception exception)
    {
        if (_box is null)
        {
            _box = PooledBox<T>.Faulted(exception);
        }
        else
        {
            _box.SetException(exception);
        }
    }

    /// <summary>Suspends until the awaiter completes, flowing the ExecutionContext.</summary>
    public void AwaitOnCompleted<TAwaiter, TStateMachine>(ref TAwaiter awaiter, ref TStateMachine stateMachine)
        where TAwaiter : INotifyCompletion
        where TStateMachine : IAsyncStateMachine
    {
        PerThread state = PerThread.Current;
        StateMachineBox<TStateMachine, T> box = GetBox(ref stateMachine, state);
        awaiter.OnCompleted(box.GetForeignContinuation(state));
    }

    /// <summary>Suspends until the awaiter completes.</summary>
    /// <remarks>
    /// Always optimized: unoptimized (tier-0) code would box the awaiter for the interface test
    /// below, 32 bytes on every suspension until tiered compilation caught up.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void AwaitUnsafeOnCompleted<TAwaiter, TStateMachine>(ref TAwaiter awaiter, ref TStateMachine stateMachine)
        where TAwaiter : ICriticalNotifyCompletion
        where TStateMachine : IAsyncStateMachine
    {
        PerThread state = PerThread.Current;
        StateMachineBox<TStateMachine, T> box = GetBox(ref stateMachine, state);

        // For value-type awaiters the JIT folds the type test and removes the box of the cast
        // (the same pattern the BCL's builders use), so awaiting a job costs no delegate.
        if (default(TAwaiter) is not null && awaiter is IJobAwaiter)
        {
            box.CaptureContext(state);
            ((IJobAwaiter)awaiter).OnCompleted(box);
        }
        else
        {
            awaiter.UnsafeOnCompleted(box.GetForeignContinuation(state));
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private StateMachineBox<TStateMachine, T> GetBox<TStateMachine>(ref TStateMachine stateMachine, PerThread state)
        where TStateMachine : IAsyncStateMachine
    {
        if (_box is StateMachineBox<TStateMachine, T> existing)
        {
            return existing;
        }

        return CreateBox(ref stateMachine, state);
    }

    private StateMachineBox<TStateMachine, T> CreateBox<TStateMachine>(ref TStateMachine stateMachine, PerThread state)
        where TStateMachine : IAsyncStateMachine
    {
        StateMachineBox<TStateMachine, T> box = StateMachineBox<TStateMachine, T>.Rent(state);
        // Order matters: the builder inside the state machine must point at the box before the
        // state machine is copied into it, so that the box's copy completes the box.
        _box = box;
        box.StateMachine = stateMachine;
        if (Diagnostics.JobDiagnostics.Enabled)
        {
            Diagnostics.JobDiagnostics.OnSuspended(box);
        }

        return box;
    }
}

/// <summary>The async method builder of <see cref="Job"/>. Used by the compiler; not for direct use.</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public struct JobMethodBuilder
{
    private JobMethodBuilder<VoidResult> _inner;

    /// <summary>Creates a builder.</summary>
    public static JobMethodBuilder Create() => default;

    /// <summary>The job this method returns.</summary>
    public Job Task => new(_inner.Task);

    /// <summary>Runs the method's first step, inline when the stack allows it.</summary>
    public void Start<TStateMachine>(ref TStateMachine stateMachine) where TStateMachine : IAsyncStateMachine
        => _inner.Start(ref stateMachine);

    /// <summary>Not used: boxing is done by the builder itself.</summary>
    public void SetStateMachine(IAsyncStateMachine stateMachine) => _inner.SetStateMachine(stateMachine);

    /// <summary>Completes the job.</summary>
    public void SetResult() => _inner.SetResult(default);

    /// <summary>Completes the job with an exception (cancellation included).</summary>
    public void SetException(Exception exception) => _inner.SetException(exception);

    /// <summary>Suspends until the awaiter completes, flowing the ExecutionContext.</summary>
    public void AwaitOnCompleted<TAwaiter, TStateMachine>(ref TAwaiter awaiter, ref TStateMachine stateMachine)
        where TAwaiter : INotifyCompletion
        where TStateMachine : IAsyncStateMachine
        => _inner.AwaitOnCompleted(ref awaiter, ref stateMachine);

    /// <summary>Suspends until the awaiter completes.</summary>
    public void AwaitUnsafeOnCompleted<TAwaiter, TStateMachine>(ref TAwaiter awaiter, ref TStateMachine stateMachine)
        where TAwaiter : ICriticalNotifyCompletion
        where TStateMachine : IAsyncStateMachine
        => _inner.AwaitUnsafeOnCompleted(ref awaiter, ref stateMachine);
}

/// <summary>Implemented by Myriad's awaiters so that the builders can register a box directly.</summary>
internal interface IJobAwaiter
{
    /// <summary>The cell behind the awaited job; null when it completed synchronously (diagnostics).</summary>
    JobCell? Cell { get; }

    void OnCompleted(WorkItem continuation);
}
