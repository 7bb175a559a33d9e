using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>
/// A detached spawn (<see cref="JobRuntime.SpawnDetached{TState}(TState, Func{TState, Job}, CancellationToken)"/>):
/// the queue entry that starts the body, and nothing more. Pooled.
/// </summary>
/// <remarks>
/// <para>Not a completion cell, unlike <see cref="SpawnBox{TState, TResult}"/>: nobody holds a handle
/// to a detached spawn, so nobody can wait for it, run it inline or help it, and its one queue entry
/// is the only reference to it. Whoever dequeues that entry owns the item outright, and no claim
/// protocol is needed. That makes it 64 bytes with 24 bytes of state, against 88 for a
/// spawn box: a million sleepers spawned at once keep a million of these in the queues until they
/// start, and every byte of them survives a collection or two.</para>
/// <para>The runtime's shared <see cref="DetachedJobObserver"/> observes the body's pending job, as
/// for a spawn box; the item goes back to its pool before the body runs, so a body that spawns again
/// reuses it while it is still in this core's cache.</para>
/// </remarks>
internal sealed class DetachedSpawn<TState> : WorkItem
{
    private static readonly BoxPool<DetachedSpawn<TState>> s_pool = BoxPool<DetachedSpawn<TState>>.Shared;

    private static readonly ContextCallback s_run = static s =>
    {
        var (runtime, state, body, sync) = ((JobRuntime, TState, object, bool))s!;
        Run(runtime, state, body, sync, PerThread.Current);
    };

    // No flag for the body's kind: Action<TState> (a synchronous body) or Func<TState, Job>, told
    // apart by a type test at the start. A flag would take the item from 64 to 72 bytes with 24 bytes
    // of state (a 1-byte field still costs a word of alignment).
    private TState _state = default!;
    private object? _body;

    /// <summary>The token and the captured context, packed (<see cref="SpawnStartExtras"/>).</summary>
    private object? _extras;
    private JobRuntime? _runtime;

    /// <summary>A filled item; <paramref name="sync"/> true: <paramref name="body"/> is an <c>Action&lt;TState&gt;</c>, false: a <c>Func&lt;TState, Job&gt;</c>.</summary>
    internal static DetachedSpawn<TState> Rent(PerThread thread, JobRuntime runtime, TState state, object body, bool sync, CancellationToken cancellationToken)
    {
        DetachedSpawn<TState> item = s_pool.Rent(thread) ?? new();
        Debug.Assert(sync == body is Action<TState>, "the body's type names its kind");
        item._state = state;
        item._body = body;
        item._extras = SpawnStartExtras.Pack(ExecutionContextHelper.CaptureNonDefault(thread), cancellationToken);
        item._runtime = runtime;
        return item;
    }

    internal override void Execute(PerThread state)
    {
        JobRuntime runtime = _runtime!;
        TState value = _state;
        object body = _body!;
        bool sync = body is Action<TState>;
        ExecutionContext? context = SpawnStartExtras.Unpack(_extras, out CancellationToken cancellationToken);
        Release(state);

        if (cancellationToken.IsCancellationRequested)
        {
            runtime.OnDetachedJobCompleted(ThrowHelper.Canceled(cancellationToken), state);
            return;
        }

        if (context is null && ExecutionContextHelper.IsDefault(state))
        {
            // No SynchronizationContext to put back here, unlike SpawnBox.Start: nobody holds a
            // handle to wait for this spawn or help it, so only a scheduler's loop runs it
            // (Trampoline.RunFromScheduler), which resets both contexts after every item.
            Run(runtime, value, body, sync, state);
            ExecutionContextHelper.RestoreDefaultIfChanged(state);
        }
        else
        {
            // Rare (a spawn under an AsyncLocal or a flowed culture): the boxed tuple is the price.
            ExecutionContext.Run(context ?? ExecutionContextHelper.Default, s_run, (runtime, value, body, sync));
        }
    }

    /// <summary>The runtime finished its disposal before the spawn started: it ends canceled, as a spawn box does (a job never runs off its runtime).</summary>
    internal override void Abandon()
    {
        JobRuntime runtime = _runtime!;
        PerThread state = PerThread.Current;
        Release(state);
        runtime.OnDetachedJobCompleted(new OperationCanceledException("The runtime was disposed before the job started."), state);
    }

    /// <summary>Runs the body; <paramref name="thread"/> is the calling thread's state. Also for a detached spawn started inline (<see cref="JobRuntime.TryStartDetachedInline{TState}"/>).</summary>
    internal static void Run(JobRuntime runtime, TState state, object body, bool sync, PerThread thread)
    {
        Job job;
        try
        {
            // The flag came from a type test of the body (Execute), so the casts can be unchecked,
            // as in SpawnBox.InvokeBody.
            if (sync)
            {
                Unsafe.As<Action<TState>>(body)(state);
                runtime.OnDetachedJobCompleted(null, thread);
                return;
            }

            job = Unsafe.As<Func<TState, Job>>(body)(state);
        }
        catch (Exception exception)
        {
            runtime.OnDetachedJobCompleted(exception, thread);
            return;
        }

        Job<VoidResult> inner = job._inner;
        if (inner._box is not { } cell)
        {
            runtime.OnDetachedJobCompleted(null, thread); // default(Job): completed
            return;
        }

        try
        {
            if (inner.IsCompleted)
            {
                Exception? error = null;
                try
                {
                    inner.GetAwaiter().GetResult();
                }
                catch (Exception exception)
                {
                    error = exception;
                }

                runtime.OnDetachedJobCompleted(error, thread);
                return;
            }

            // Registration throws InvalidOperationException only for a handle that was already
            // awaited or consumed (before anything is registered); the observer never throws.
            cell.OnCompleted(runtime.DetachedObserver, inner._token, thread);
        }
        catch (InvalidOperationException misuse)
        {
            runtime.OnDetachedJobCompleted(misuse, thread);
        }
    }

    private void Release(PerThread thread)
    {
        _state = default!;
        _body = null;
        _extras = null;
        _runtime = null;
        s_pool.Return(thread, this);
    }
}
