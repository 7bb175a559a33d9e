using System;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>
/// Spawns that start at once on the spawning thread when the queue they would join has a backlog
/// (<see cref="RuntimeOptions.SpawnInlineBacklog"/>; the runtime decides in <see cref="StartsSpawnInline"/>).
/// </summary>
/// <remarks>
/// <para><b>Why.</b> A loop that spawns a million jobs on a worker queues them faster than the other
/// workers start them: the run queue fills, every further spawn overflows to the global queue, and
/// each waiting job holds its spawn entry (64-88 bytes) and its state until it starts, all of which
/// survive a collection or two. Running the new job on the spawning thread instead, up to its
/// first suspension, keeps the backlog at the queue's size, skips the entry (a spawn whose job
/// completes or is detached allocates none), and keeps the job's state in this core's cache. The
/// other workers lose nothing: they still have a full queue to steal from. This is the child-first
/// order of Cilk and Java's ForkJoin, applied only where the parent-first order has nothing left to
/// gain.</para>
/// <para><b>What the spawner sees.</b> The spawn call returns once the job suspended or completed,
/// as a direct call of an <c>async Job</c> method does; exceptions the body throws still end in the
/// job (or, detached, in <see cref="UnobservedException"/>), never in the spawn call.
/// The job runs in the spawner's ExecutionContext (a queued spawn captures that same context), and
/// whatever the body changes in the thread's contexts is undone before the spawn returns.</para>
/// <para><b>Limits.</b> Only below the trampoline's depth limit (a body that spawns under the same
/// backlog nests one level per spawn), and, as join helping, never inside a task of a non-default
/// <c>TaskScheduler</c> (the job would see that scheduler as its own).</para>
/// </remarks>
public abstract partial class JobRuntime
{
    /// <summary>
    /// Whether a spawn made on this thread should start its job here and now: only a runtime thread
    /// that runs one of this runtime's jobs, under a backlog. False on the single-threaded runtimes,
    /// whose order of jobs is their contract (a seed's, or the queue's).
    /// </summary>
    private protected virtual bool StartsSpawnInline(PerThread thread) => false;

    /// <summary>
    /// Set by a runtime whose <see cref="StartsSpawnInline"/> may say yes, before its first spawn: every
    /// other spawn skips the virtual call with one field load.
    /// </summary>
    private protected bool _mayStartSpawnsInline;

    /// <summary>
    /// Runs a spawn's body on this thread (see the remarks above). False, with nothing done, at the
    /// trampoline's depth limit: queue the spawn instead.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private bool TryStartInline<TState, TResult>(PerThread thread, TState state, object body, SpawnBodyKind kind, CancellationToken cancellationToken, out Job<TResult> job)
    {
        if (!Trampoline.TryEnter(thread, out int previousDepth))
        {
            job = default;
            return false;
        }

        try
        {
            ThrowIfDisposed();
            _spawned.Increment(thread);
            if (cancellationToken.IsCancellationRequested)
            {
                OnJobCompleted(thread);
                job = Job.FromCanceled<TResult>(cancellationToken);
                return true;
            }

            ThreadContexts saved = ExecutionContextHelper.SaveBeforeItem(thread);
            try
            {
                job = RunInline<TState, TResult>(thread, state, body, kind);
            }
            finally
            {
                ExecutionContextHelper.RestoreAfterItem(thread, saved);
            }

            return true;
        }
        finally
        {
            Trampoline.Exit(thread, previousDepth);
        }
    }

    /// <summary>
    /// The body and what a queued spawn box does with its job (<c>SpawnBox.Start</c>), in the
    /// spawner's saved contexts: consuming a select's job runs its handler, user code that must see
    /// the job's contexts, not run after they were put back.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Job<TResult> RunInline<TState, TResult>(PerThread thread, TState state, object body, SpawnBodyKind kind)
    {
        try
        {
            Job<TResult> inner = SpawnBox<TState, TResult>.InvokeBody(body, kind, state);
            if (!inner.IsCompleted)
            {
                // The body's own job is the spawn's when its completion can count the spawn's end
                // (an async Job method that suspended on this thread): a chain of inline spawns then
                // holds one object per pending link, as a chain of direct calls does. Otherwise a
                // spawn box hands the outcome on and counts the completion, as for a queued spawn
                // whose body suspended.
                return inner._box!.TryMarkAsSpawn(Id) ? inner : SpawnBox<TState, TResult>.Adopt(thread, this, inner);
            }

            if (inner._box is not { ConsumingRunsUserCode: true })
            {
                // The body's own completed job (default for a synchronous body) is the spawn's
                // outcome: no box at all.
                OnJobCompleted(thread);
                return inner;
            }

            // A select that finished at once: its handler runs when its job is consumed, so consume
            // it here, as a queued spawn does inside its job. Handed back unconsumed, a discarded
            // handle would lose the received item, and an observer (a scope) would run the handler
            // inside its own registration.
            TResult result = inner.GetAwaiter().GetResult();
            OnJobCompleted(thread);
            return Job.FromResult(result);
        }
        catch (Exception exception)
        {
            // From the body, from its select's handler, or an InvalidOperationException for a job
            // that was already awaited or consumed elsewhere: all this job's failure, as for a
            // queued spawn, never the spawner's.
            OnJobCompleted(thread);
            return Job.FromException<TResult>(exception);
        }
    }

    /// <summary>
    /// <see cref="TryStartInline{TState, TResult}"/> for a detached spawn: a pending job is observed
    /// by the runtime's shared observer, as a queued detached spawn's is, so nothing is allocated
    /// beyond the body's own state machine.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private bool TryStartDetachedInline<TState>(PerThread thread, TState state, object body, bool sync, CancellationToken cancellationToken)
    {
        if (!Trampoline.TryEnter(thread, out int previousDepth))
        {
            return false;
        }

        try
        {
            ThrowIfDisposed();
            _spawned.Increment(thread);
            if (cancellationToken.IsCancellationRequested)
            {
                OnDetachedJobCompleted(ThrowHelper.Canceled(cancellationToken), thread);
                return true;
            }

            ThreadContexts saved = ExecutionContextHelper.SaveBeforeItem(thread);
            try
            {
                DetachedSpawn<TState>.Run(this, state, body, sync, thread);
            }
            finally
            {
                ExecutionContextHelper.RestoreAfterItem(thread, saved);
            }

            return true;
        }
        finally
        {
            Trampoline.Exit(thread, previousDepth);
        }
    }
}
