using System;
using System.ComponentModel;
using System.Diagnostics.CodeAnalysis;
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
    // AggressiveOptimization here and below: optimized from the first call, so that one-shot
    // programs do not run the spawn path as tier-0 code (docs/design.md, "Cold runs").
    [MethodImpl(MethodImplOptions.AggressiveInlining | MethodImplOptions.AggressiveOptimization)]
    public void Start<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref TStateMachine stateMachine) where TStateMachine : IAsyncStateMachine
        => BuilderCore<T>.Start(ref _box, ref stateMachine);

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
    public void SetException(Exception exception) => BuilderCore<T>.SetException(ref _box, exception);

    /// <summary>Suspends until the awaiter completes, flowing the ExecutionContext.</summary>
    public void AwaitOnCompleted<TAwaiter, [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref TAwaiter awaiter, ref TStateMachine stateMachine)
        where TAwaiter : INotifyCompletion
        where TStateMachine : IAsyncStateMachine
        => BuilderCore<T>.AwaitOnCompleted(ref _box, ref awaiter, ref stateMachine);

    /// <summary>Suspends until the awaiter completes.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void AwaitUnsafeOnCompleted<TAwaiter, [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref TAwaiter awaiter, ref TStateMachine stateMachine)
        where TAwaiter : ICriticalNotifyCompletion
        where TStateMachine : IAsyncStateMachine
        => BuilderCore<T>.AwaitUnsafeOnCompleted(ref _box, ref awaiter, ref stateMachine);
}

/// <summary>The async method builder of <see cref="Job"/>. Used by the compiler; not for direct use.</summary>
/// <remarks>Holds only the box, not a <see cref="JobMethodBuilder{T}"/>: that one's inline result slot,
/// empty here, would still pad every suspended <c>async Job</c> by 8 bytes.</remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public struct JobMethodBuilder
{
    private JobBox<VoidResult>? _box;

    /// <summary>Creates a builder.</summary>
    public static JobMethodBuilder Create() => default;

    /// <summary>The job this method returns.</summary>
    public Job Task => _box is null ? default : new(new Job<VoidResult>(_box, _box.Version));

    /// <summary>Runs the method's first step, inline when the stack allows it.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining | MethodImplOptions.AggressiveOptimization)]
    public void Start<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref TStateMachine stateMachine) where TStateMachine : IAsyncStateMachine
        => BuilderCore<VoidResult>.Start(ref _box, ref stateMachine);

    /// <summary>Not used: boxing is done by the builder itself.</summary>
    public void SetStateMachine(IAsyncStateMachine stateMachine) => ArgumentNullException.ThrowIfNull(stateMachine);

    /// <summary>Completes the job.</summary>
    public void SetResult() => _box?.SetResult(default);

    /// <summary>Completes the job with an exception (cancellation included).</summary>
    public void SetException(Exception exception) => BuilderCore<VoidResult>.SetException(ref _box, exception);

    /// <summary>Suspends until the awaiter completes, flowing the ExecutionContext.</summary>
    public void AwaitOnCompleted<TAwaiter, [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref TAwaiter awaiter, ref TStateMachine stateMachine)
        where TAwaiter : INotifyCompletion
        where TStateMachine : IAsyncStateMachine
        => BuilderCore<VoidResult>.AwaitOnCompleted(ref _box, ref awaiter, ref stateMachine);

    /// <summary>Suspends until the awaiter completes.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void AwaitUnsafeOnCompleted<TAwaiter, [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref TAwaiter awaiter, ref TStateMachine stateMachine)
        where TAwaiter : ICriticalNotifyCompletion
        where TStateMachine : IAsyncStateMachine
        => BuilderCore<VoidResult>.AwaitUnsafeOnCompleted(ref _box, ref awaiter, ref stateMachine);
}

/// <summary>
/// What both builders do, over a reference to the builder's box field (which lives inside the state
/// machine: on the stack until the first suspension, then in the box itself).
/// </summary>
internal static class BuilderCore<T>
{
    /// <summary>Runs the method's first step, inline when the stack allows it.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Start<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref JobBox<T>? boxField, ref TStateMachine stateMachine) where TStateMachine : IAsyncStateMachine
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
            StateMachineBox<TStateMachine, T> box = GetBox(ref boxField, ref stateMachine, state);
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
    private static void StartDirect<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref TStateMachine stateMachine, PerThread state, int previousDepth) where TStateMachine : IAsyncStateMachine
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

    /// <summary>Suspends until the awaiter completes, flowing the ExecutionContext.</summary>
    internal static void AwaitOnCompleted<TAwaiter, [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref JobBox<T>? boxField, ref TAwaiter awaiter, ref TStateMachine stateMachine)
        where TAwaiter : INotifyCompletion
        where TStateMachine : IAsyncStateMachine
    {
        PerThread state = PerThread.Current;
        bool created = boxField is null;
        StateMachineBox<TStateMachine, T> box = GetBox(ref boxField, ref stateMachine, state);
        SynchronizationContext? hidden = ExecutionContextHelper.HideSynchronizationContext(state); // see UnsafeRegisterForeign
        try
        {
            awaiter.OnCompleted(box.GetForeignContinuation(state));
        }
        catch
        {
            RegistrationFailed(ref boxField, box, created);
            throw;
        }
        finally
        {
            if (hidden is not null)
            {
                ExecutionContextHelper.RestoreSynchronizationContext(state, hidden);
            }
        }
    }

    /// <summary>Suspends until the awaiter completes.</summary>
    /// <remarks>
    /// Always optimized: unoptimized (tier-0) code would box the awaiter for the interface test
    /// below, 32 bytes on every suspension until tiered compilation caught up.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static void AwaitUnsafeOnCompleted<TAwaiter, [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref JobBox<T>? boxField, ref TAwaiter awaiter, ref TStateMachine stateMachine)
        where TAwaiter : ICriticalNotifyCompletion
        where TStateMachine : IAsyncStateMachine
    {
        PerThread state = PerThread.Current;
        bool created = boxField is null;
        StateMachineBox<TStateMachine, T> box = GetBox(ref boxField, ref stateMachine, state);

        // For value-type awaiters the JIT folds the type test and removes the box of the cast
        // (the same pattern the BCL's builders use), so awaiting a job costs no delegate. That path
        // reports a refusal instead of throwing, so this method needs no exception handler.
        if (default(TAwaiter) is not null && awaiter is IJobAwaiter)
        {
            box.CaptureContext(state);
            if (!((IJobAwaiter)awaiter).TryOnCompleted(box, state))
            {
                RegistrationFailed(ref boxField, box, created);
                ((IJobAwaiter)awaiter).ThrowRegistrationRefused();
            }
        }
        else if (typeof(TAwaiter) == typeof(YieldAwaitable.YieldAwaiter) && state.Context is { } context)
        {
            // Task.Yield inside a job on a runtime: queue the job straight back to its runtime, behind
            // the work already there. The BCL's awaiter would go through the .NET thread pool, where
            // the wake-up is in flight out of the runtime's sight (a disposal could not drain it) and
            // costs a second hop. The JIT folds the type test.
            box.CaptureContext(state);
            context.Runtime.Schedule(box, state);
        }
        else
        {
            UnsafeRegisterForeign(ref boxField, ref awaiter, box, created, state);
        }
    }

    /// <summary>The foreign half of <see cref="AwaitUnsafeOnCompleted"/>, where the awaiter may throw.</summary>
    private static void UnsafeRegisterForeign<TAwaiter, [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref JobBox<T>? boxField, ref TAwaiter awaiter, StateMachineBox<TStateMachine, T> box, bool created, PerThread state)
        where TAwaiter : ICriticalNotifyCompletion
        where TStateMachine : IAsyncStateMachine
    {
        // A job never resumes on a SynchronizationContext (docs/design.md, section 1.3), but the BCL's
        // awaiters capture SynchronizationContext.Current when they register. A job that runs on a
        // thread with a context (an async Job method called directly from a UI thread) would have its
        // resume posted to that thread, and a blocking wait for the job there would deadlock. So the
        // context is hidden while the awaiter registers. The registration may complete the awaiter
        // and even resume the job elsewhere at once: only this thread's field is touched meanwhile.
        // A task that runs its continuations asynchronously or a Task.Delay with a token (any task
        // where resumes are queued: on a deterministic runtime, on a lent thread) is shown Myriad's
        // own context instead, so that the TPL posts the resume straight to the runtime rather than
        // through the thread pool (see ResumeContext).
        SynchronizationContext? shown = ResumeContext.For(ref awaiter, state);
        SynchronizationContext? hidden = ExecutionContextHelper.ReplaceSynchronizationContext(state, shown);
        try
        {
            ResumeContext.Register(ref awaiter, box.GetForeignContinuation(state), shown is not null);
        }
        catch
        {
            RegistrationFailed(ref boxField, box, created);
            throw;
        }
        finally
        {
            if (hidden is not null || shown is not null)
            {
                ExecutionContextHelper.RestoreSynchronizationContext(state, hidden);
            }
        }
    }

    /// <summary>
    /// The awaiter refused the continuation (a job awaited twice, a ValueTask source that already has
    /// a continuation) and the exception goes on into the async method, which may catch it and run
    /// on without suspending. Undoes the suspension so that the method's next suspension finds a
    /// consistent box: the first suspension's box holds a copy of the state machine that the method
    /// no longer runs on, so it is returned unused and the next suspension copies afresh; a later
    /// suspension runs on the box's own copy and only drops what it parked for the resume.
    /// </summary>
    /// <remarks>
    /// The BCL's builders rethrow such an exception on the thread pool instead (crashing the process);
    /// Myriad hands it to the method, so that awaiting a job twice surfaces where the misuse is.
    /// </remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void RegistrationFailed<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref JobBox<T>? boxField, StateMachineBox<TStateMachine, T> box, bool created)
        where TStateMachine : IAsyncStateMachine
    {
        box.AbandonSuspension();
        if (created)
        {
            boxField = null;
            box.ReturnUnused();
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static StateMachineBox<TStateMachine, T> GetBox<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref JobBox<T>? boxField, ref TStateMachine stateMachine, PerThread state)
        where TStateMachine : IAsyncStateMachine
    {
        if (boxField is StateMachineBox<TStateMachine, T> existing)
        {
            return existing;
        }

        return CreateBox(ref boxField, ref stateMachine, state);
    }

    private static StateMachineBox<TStateMachine, T> CreateBox<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicFields | DynamicallyAccessedMemberTypes.NonPublicFields)] TStateMachine>(ref JobBox<T>? boxField, ref TStateMachine stateMachine, PerThread state)
        where TStateMachine : IAsyncStateMachine
    {
        StateMachineBox<TStateMachine, T> box = StateMachineBox<TStateMachine, T>.Rent(state);
        // Order matters: the builder inside the state machine (boxField points into it) must point
        // at the box before the state machine is copied into it, so that the box's copy completes the box.
        boxField = box;
        box.StateMachine = stateMachine;
        if (Diagnostics.JobDiagnostics.Enabled)
        {
            Diagnostics.JobDiagnostics.OnSuspended(box);
        }

        return box;
    }

    /// <summary>Completes with an exception; a method that fails before its first suspension gets a faulted pooled box.</summary>
    internal static void SetException(ref JobBox<T>? boxField, Exception exception)
    {
        if (boxField is null)
        {
            boxField = PooledBox<T>.Faulted(exception);
        }
        else
        {
            boxField.SetException(exception);
        }
    }
}

/// <summary>Implemented by Myriad's awaiters so that the builders can register a box directly.</summary>
internal interface IJobAwaiter
{
    /// <summary>The cell behind the awaited job; null when it completed synchronously (diagnostics).</summary>
    JobCell? Cell { get; }

    /// <summary>
    /// Registers the continuation; false, with nothing registered, for a stale handle or a job awaited
    /// twice. <paramref name="state"/> is the calling thread's (the builder holds it already).
    /// </summary>
    bool TryOnCompleted(WorkItem continuation, PerThread state);

    /// <summary>Throws what a refused <see cref="TryOnCompleted"/> means.</summary>
    void ThrowRegistrationRefused();
}
