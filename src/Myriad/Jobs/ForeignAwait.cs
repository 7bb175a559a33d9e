using System;
using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Jobs;

/// <summary>
/// What a suspended job keeps while it awaits a Task, a ValueTask or any other non-Myriad awaiter:
/// the delegate such awaiters insist on, the job's ExecutionContext and the runtime to resume on.
/// Pooled, so that neither this object nor its delegate is allocated per await in steady state, and
/// kept out of the job's box, which would otherwise carry the delegate in every pending job (a million
/// pending jobs is the workload the box is sized for, and most jobs never await a Task).
/// </summary>
/// <remarks>
/// <para><b>Protocol.</b> While attached, the object stands in for the box's <c>_aux</c> slot: the box
/// keeps its suspension context in <see cref="Context"/>.
/// 1. At a foreign suspension the box attaches one if it has none (rented from the suspending
///    thread's pool and parked in <c>_aux</c>), records the context and the runtime
///    (<see cref="Park"/>) and hands the awaiter <see cref="Continuation"/>.
/// 2. The awaiter calls <see cref="Continuation"/> once, on any thread. It disarms the object (so that
///    a second call made before the box suspends on a Task again fails loudly instead of running the
///    box twice; a later one cannot be told from a real resume, the hazard of every pooled
///    continuation, the BCL's pooled boxes included), sends the box back to
///    that runtime (a job must not drift off its runtime, least of all off a single-threaded one) or
///    else runs it through the trampoline, and touches nothing after that: from then on another
///    thread may run the box.
/// 3. The box, when it runs, takes the context back (<see cref="Unpark"/>) and stays attached, so a
///    loop of Task awaits rents once.
/// 4. The box detaches it and returns it to the pool of the thread it is on when it next suspends on
///    a Myriad job (a job pending on a job carries nothing for Tasks). That thread also rents: it is
///    the thread running the job. Returning it from the thread that completed the task instead would
///    strand it in a thread-pool or timer thread's pool whenever a plain thread starts the jobs.
/// 5. When the box is released, it keeps this object in its pool (the next job on the box that
///    awaits a Task rents nothing; one that first awaits a job detaches it in step 4), so a pooled box
///    carries at most one. A job that fails puts its error in <c>_aux</c>, so it first returns this
///    object to the pool of the thread it fails on (the thread running it, as in step 4).</para>
/// <para>The delegate is created once per object and survives pooling. If the awaiter throws instead
/// of taking the continuation, the builder unparks this object (disarming it) before the exception
/// reaches the async method.</para>
/// </remarks>
internal sealed class ForeignAwait : WorkItem
{
    private static readonly BoxPool<ForeignAwait> s_pool = BoxPool<ForeignAwait>.Shared;

    private WorkItem? _box;

    /// <summary>The runtime the pending foreign suspension started on (null: none, or not suspended).</summary>
    private JobRuntime? _resumeOn;

    /// <summary>
    /// Diagnostics: the Myriad cell this resume is registered on when the job awaits it through a
    /// <c>ValueTask</c> (see <see cref="OfValueTaskContinuation"/>); null for any other awaiter.
    /// Cleared with the arming, so it names only a pending await.
    /// </summary>
    private JobCell? _registeredOn;

    /// <summary>The version of <see cref="_registeredOn"/>'s use that the resume was registered on.</summary>
    private short _registeredToken;

    /// <summary>True between steps 1 and 2: the continuation may run once.</summary>
    private bool _armed;

    private Action? _continuation;

    private ForeignAwait()
    {
    }

    /// <summary>The box's non-default ExecutionContext while it is suspended, or null.</summary>
    internal ExecutionContext? Context { get; set; }

    /// <summary>Step 1: attach.</summary>
    internal static ForeignAwait Rent(PerThread state, WorkItem box)
    {
        ForeignAwait foreign = s_pool.Rent(state) ?? new ForeignAwait();
        foreign._box = box;
        return foreign;
    }

    /// <summary>Step 1: record what the resume needs.</summary>
    internal void Park(ExecutionContext? context, JobRuntime? resumeOn)
    {
        // Both are null here (fresh from the pool, or cleared by Unpark after a resume or a failed
        // registration), and usually stay null: skipping the store of a null skips a GC write barrier.
        if (context is not null)
        {
            Context = context;
        }

        if (resumeOn is not null)
        {
            _resumeOn = resumeOn;
        }

        _armed = true;
    }

    /// <summary>The delegate to give the awaiter (step 2).</summary>
    internal Action Continuation => _continuation ??= Resume;

    /// <summary>Step 2.</summary>
    private void Resume() => Resume(PerThread.Current);

    /// <summary>
    /// Step 2 for a job that awaits a Myriad cell through a <see cref="System.Threading.Tasks.ValueTask"/>
    /// (<see cref="SourceBox{T}"/> registered this object instead of the awaiter's delegate, see
    /// <see cref="OfValueTaskContinuation"/>): the cell's completion runs it as a job continuation.
    /// </summary>
    internal override void Execute(PerThread state) => Resume(state);

    private void Resume(PerThread state)
    {
        if (state.QueuesForeignResumes && _resumeOn is not null)
        {
            ResumeFromPost(); // a channel operation's completion posted to ResumeContext
            return;
        }

        WorkItem box = Disarm();
        JobRuntime? runtime = _resumeOn;
        if (runtime is not null && state.Context?.Runtime != runtime)
        {
            runtime.ScheduleResume(box, state);
        }
        else
        {
            Trampoline.Dispatch(state, box);
        }
    }

    internal override bool WakesOutside(JobRuntime runtime) => _resumeOn != runtime; // it sends its job home

    /// <summary>Whether the parked job belongs to no runtime (it suspended on a thread of none), so its resume has no home to go to.</summary>
    internal bool ResumesOnNoRuntime => _resumeOn is null;

    /// <summary>Diagnostics: the Myriad cell a pending resume is registered on through a <c>ValueTask</c>; null otherwise.</summary>
    internal JobCell? PendingCell => _armed ? _registeredOn : null;

    /// <summary>Records the cell that <see cref="OfValueTaskContinuation"/>'s caller registers this resume on, before it registers.</summary>
    internal void RegisteringOn(JobCell cell, short token)
    {
        _registeredOn = cell;
        _registeredToken = token;
    }

    /// <summary>
    /// The cell whose completion ran this resume, while the box has not run since (the disarm keeps
    /// it; <see cref="Unpark"/> drops it): a job abandoned by its runtime's disposal on the way gives
    /// back what that cell holds (<c>StateMachineBox.Abandon</c>). Null when the cell was reused since.
    /// </summary>
    internal JobCell? ResumedFrom => !_armed && _registeredOn is { } cell && cell.IsCompletedNoThrow(_registeredToken) ? cell : null;

    /// <summary>Whether <paramref name="action"/> is this object's continuation delegate (see <see cref="ResumeContext"/>).</summary>
    internal bool IsContinuation(Action action) => ReferenceEquals(action, _continuation);

    /// <summary>
    /// The job resume that a BCL <c>ValueTask</c> awaiter hands to its source: the awaiter calls
    /// <c>OnCompleted(invoke, state)</c> with the BCL's own delegate that only calls the
    /// <see cref="Action"/> in <c>state</c>. When that action is a job's continuation, the source may
    /// run the job's resume itself (it is job code, not the awaiter's); null for anything else, an
    /// awaiter that wraps the call in code of its own included.
    /// </summary>
    internal static ForeignAwait? OfValueTaskContinuation(Action<object?> invoke, object? state) =>
        state is Action { Target: ForeignAwait foreign } action && foreign.IsContinuation(action) && ReferenceEquals(invoke, ValueTaskInvoker.Delegate)
            ? foreign
            : null;

    /// <summary>
    /// Step 2 for a continuation the TPL posted to <see cref="ResumeContext"/> (a task that runs its
    /// continuations asynchronously): the box goes back to its runtime's queue, also from a thread of
    /// that runtime (behind the item running there, never inside the completion).
    /// </summary>
    internal void ResumeFromPost()
    {
        JobRuntime runtime = _resumeOn ?? throw CalledAfterMovingOn();
        WorkItem box = Disarm();
        PerThread state = PerThread.Current;
        if (runtime is Scheduling.MultiThreadRuntime multi && (runtime.IsDisposed || state.Context?.Runtime != runtime))
        {
            // From outside the runtime, or while its disposal drains: queued unless the drain is
            // over, so the drain runs a resume posted while it runs (sent through the thread pool,
            // such a resume arrived after the drain and the job was abandoned, its finally blocks
            // not run). Once drained, the runtime would abandon the job on the spot, which
            // completes whatever awaits it: plain code, observers. The poster (a
            // TaskCompletionSource's SetResult, a channel's TryWrite, maybe under the caller's lock)
            // asked for an asynchronous continuation, so that happens on the thread pool, where the
            // box finds its runtime and is abandoned. The same holds when the disposal finishes
            // between this check and the queuing (see TryScheduleUnlessDrained).
            if (!multi.TryScheduleUnlessDrained(box, state))
            {
                Trampoline.RunOnThreadPool(box);
            }

            return;
        }

        if (runtime.IsDisposed)
        {
            // A single-threaded runtime does not drain resumes: abandoned, on the thread pool (as above).
            Trampoline.RunOnThreadPool(box);
            return;
        }

        if (state.Context?.Runtime == runtime)
        {
            runtime.Schedule(box, state);
        }
        else
        {
            runtime.ScheduleResume(box, state);
        }
    }

    /// <summary>Step 2's check and disarm, shared by both ways in: the box to resume.</summary>
    private WorkItem Disarm()
    {
        WorkItem? box = _box;
        if (!_armed || box is null)
        {
            throw CalledAfterMovingOn();
        }

        _armed = false; // before the dispatch: the box may suspend again and park anew right after it
        return box; // _registeredOn stays until the box runs (ResumedFrom)
    }

    private static InvalidOperationException CalledAfterMovingOn() =>
        new("A non-Myriad awaiter called its continuation twice, or after the job it resumes had moved on.");

    /// <summary>Step 3, on the thread that runs the box (and step 5): returns the context, forgets the runtime, disarms.</summary>
    internal ExecutionContext? Unpark()
    {
        ExecutionContext? context = Context;
        Context = null;
        _resumeOn = null;
        _armed = false; // already so after a resume; not after a registration that threw
        _registeredOn = null;
        return context;
    }

    /// <summary>Step 4: detach.</summary>
    internal void Return(PerThread state)
    {
        _box = null;
        _resumeOn = null;
        _armed = false;
        _registeredOn = null;
        Context = null;
        s_pool.Return(state, this);
    }
}
