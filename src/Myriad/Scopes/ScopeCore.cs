using System;
using System.Collections.Generic;
using System.Threading;
using Myriad.Channels;
using Myriad.Coordination;
using Myriad.Internal;
using Myriad.Jobs;
using Myriad.Scheduling;

namespace Myriad;

/// <summary>
/// The state shared by <see cref="JobScope"/> and <see cref="JobScope{T}"/>: the children's count,
/// their failures, the cancellation source, the optional slot limit and, for a scope that collects
/// results, the queue they arrive in. It is also the one <see cref="CellObserver"/> registered on every
/// child's pending job, so a child costs no object beyond its spawn box.
/// </summary>
/// <remarks>
/// <para><b>States</b> (<c>_state</c>, under <c>_lock</c>): Open (children may be spawned) -> Disposing
/// (the token is canceled; spawns end canceled without running) -> Disposed (every child ended; the
/// cancellation source is disposed; spawns throw <see cref="ObjectDisposedException"/>).</para>
/// <para><b>Child protocol.</b>
/// 1. A spawn first takes a slot when there is a limit (waiting for one if need be, with no token: a
///    cancelable wait would allocate per child). Instead, the scope's cancellation adds one permit,
///    which every refused spawn passes on (it gives back the slot it took, step 2): the spawns
///    waiting then end at once, not when a running child ends. No child starts once the token is
///    canceled, so the extra permit never lets more than the limit run.
/// 2. Under the lock it checks the state and the token and counts the child live.
/// 3. It spawns the body on the runtime with the scope's token, and registers this observer as the
///    continuation of the child's job.
/// 4. When the child ends, the observer (inline, on the completing thread) takes the outcome and, under
///    the lock, records a failure, counts the child ended and, for a collecting scope, counts one more
///    item not yet received. Outside the lock it sends that item (a result, or a no-result marker for a
///    failed child), gives the slot back, and completes the idle waiters if the count reached zero.
/// 5. The first failure (an exception other than <see cref="OperationCanceledException"/>) cancels the
///    token. The cancellation is queued on the runtime rather than run inline: the token's callbacks are
///    user code, and an observer must not run user code inside another job's completion.</para>
/// <para><b>Enumeration protocol</b> (one enumerator at a time). A wait on the result queue is backed
/// either by a live child (which will send an item) or by an item counted but not received yet (sent,
/// or about to be): the enumerator finishes only when, under the lock, both counts are zero, and it
/// receives one item per counted one. So it never waits for an item nobody will send, and never
/// finishes while a result is on its way.</para>
/// </remarks>
internal sealed class ScopeCore<TResult> : CellObserver
{
    private const int Open = 0;
    private const int Disposing = 1;
    private const int Disposed = 2;

    private readonly CancellationTokenSource _cts;
    private readonly CancellationToken _token;

    /// <summary>The caller's token, which <see cref="_token"/> is linked to (default: none).</summary>
    private readonly CancellationToken _outerToken;
    private readonly JobSemaphore? _slots;
    private readonly Chan<(TResult Value, bool HasValue)>? _results;
    private TinyLock _lock;
    private int _state;
    private int _live;
    private int _unreceived;
    private bool _enumerating;
    private bool _childCanceled;
    private List<Exception>? _failures;
    private int _observedFailures;
    private List<Promise<bool>>? _idleWaiters;
    private int _cancelQueued;

    internal ScopeCore(JobRuntime runtime, int maxConcurrency, bool collectsResults, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(runtime);
        ArgumentOutOfRangeException.ThrowIfNegative(maxConcurrency);
        Runtime = runtime;
        MaxConcurrency = maxConcurrency;
        _cts = cancellationToken.CanBeCanceled
            ? CancellationTokenSource.CreateLinkedTokenSource(cancellationToken)
            : new CancellationTokenSource();
        _token = _cts.Token;
        _outerToken = cancellationToken;
        if (maxConcurrency > 0)
        {
            // No maximum count: a canceled scope adds one permit (step 1).
            _slots = new JobSemaphore(maxConcurrency);
            _token.UnsafeRegister(static s => ((JobSemaphore)s!).Release(), _slots);
        }

        _results = collectsResults ? Chan.Unbounded<(TResult, bool)>() : null;
    }

    internal JobRuntime Runtime { get; }

    internal int MaxConcurrency { get; }

    internal CancellationToken Token => _token;

    internal int LiveCount
    {
        get
        {
            _lock.Enter();
            int live = _live;
            _lock.Exit();
            return live;
        }
    }

    internal AggregateException? Exception
    {
        get
        {
            _lock.Enter();
            Exception[]? failures = _failures?.ToArray();
            _lock.Exit();
            return failures is null ? null : new AggregateException(failures);
        }
    }

    internal void Cancel()
    {
        try
        {
            _cts.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // Every child has ended and the scope is gone: there is nothing left to cancel.
        }
    }

    /// <summary>Steps 1 to 3 for a spawner that may wait for a slot.</summary>
    /// <remarks><paramref name="launch"/> is a <c>static</c> lambda of the public scope type that spawns
    /// <paramref name="body"/> on the runtime with typed state: no closure per child.</remarks>
    internal Job SpawnAsync<TState, TBody>(TState state, TBody body, Launcher<TState, TBody> launch)
    {
        if (_slots is null || _slots.TryAcquire(out _))
        {
            return StartAdmitted(state, body, launch) is { } refusal ? Job.FromException(refusal) : default;
        }

        return SpawnAfterSlotAsync(this, state, body, launch);

        static async Job SpawnAfterSlotAsync(ScopeCore<TResult> core, TState state, TBody body, Launcher<TState, TBody> launch)
        {
            // The releaser is not kept: the slot goes back with Release when the child ends (step 4).
            await core._slots!.AcquireAsync();
            if (core.StartAdmitted(state, body, launch, waitedForSlot: true) is { } refusal)
            {
                throw refusal;
            }
        }
    }

    /// <summary>As <see cref="SpawnAsync"/>, but only when a slot is free now.</summary>
    internal bool TrySpawn<TState, TBody>(TState state, TBody body, Launcher<TState, TBody> launch)
    {
        if (_slots is not null && !_slots.TryAcquire(out _))
        {
            return false;
        }

        if (StartAdmitted(state, body, launch) is { } refusal)
        {
            throw refusal;
        }

        return true;
    }

    /// <summary>Spawns one child on <paramref name="runtime"/>, giving it the scope's token.</summary>
    internal delegate Job<TResult> Launcher<TState, TBody>(JobRuntime runtime, TState state, TBody body, CancellationToken token);

    /// <summary>
    /// Steps 2 and 3, holding a slot if there is a limit; returns the refusal instead of spawning.
    /// A spawn that waited for a slot while the scope was left gets the cancellation that leaving
    /// made, as it would have had it woken a moment before the disposal ended: which of the two it
    /// saw was a race, and a spawning loop catching <see cref="OperationCanceledException"/> missed
    /// about one in seven as <see cref="ObjectDisposedException"/>. A spawn that starts after
    /// the scope was left is a misuse, and gets <see cref="ObjectDisposedException"/>.
    /// </summary>
    private Exception? StartAdmitted<TState, TBody>(TState state, TBody body, Launcher<TState, TBody> launch, bool waitedForSlot = false)
    {
        _lock.Enter();
        int current = _state;
        // A recorded failure counts as the cancellation it queued (CancelWork runs later): a spawn
        // admitted by the slot the failed child gave back must not start a child meanwhile.
        bool failed = _failures is { Count: > 0 };
        bool canceled = _token.IsCancellationRequested || failed;
        Exception? failure = null;
        if (current == Open && !canceled)
        {
            _live++;
        }
        else if (current != Disposed && failed)
        {
            // A child's failure canceled the scope (it is recorded before the cancellation runs):
            // the spawning loop, which stops here before it reaches `await scope`, gets that failure,
            // as awaiting the scope would give it, rather than a cancellation that hides it (and
            // leaves the failure to the unobserved-exception event at disposal). A failure wins over
            // a cancellation, as in Task.WhenAll.
            failure = TakeOutcomeLocked();
        }

        _lock.Exit();
        if (current != Open || canceled)
        {
            _slots?.Release();
            return current == Disposed && !waitedForSlot
                ? new ObjectDisposedException(nameof(JobScope))
                : failure ?? new OperationCanceledException("The scope is canceled: no child is started.", CanceledToken);
        }

        Job<TResult> job;
        try
        {
            job = launch(Runtime, state, body, _token);
        }
        catch (Exception e)
        {
            ChildEnded(default!, e, spawnFailed: true); // the runtime refused it (disposed): undo the count
            return e;
        }

        if (job._box is { } box)
        {
            box.OnCompleted(this, job._token);
        }
        else
        {
            ChildEnded(job._result, null, spawnFailed: false);
        }

        return null;
    }

    /// <summary>Step 4, for a child's pending job.</summary>
    internal override void OnCellCompleted(JobCell cell, short token)
    {
        TResult value = ((JobBox<TResult>)cell).ConsumeResultForObserver(token, out Exception? error);
        ChildEnded(value, error, spawnFailed: false);
    }

    private void ChildEnded(TResult value, Exception? error, bool spawnFailed)
    {
        bool firstFailure = false;
        List<Promise<bool>>? idle = null;
        _lock.Enter();
        if (error is OperationCanceledException)
        {
            _childCanceled = true;
        }
        else if (error is not null && !spawnFailed)
        {
            (_failures ??= []).Add(error);
            firstFailure = _failures.Count == 1;
        }

        bool sends = _results is not null && !spawnFailed;
        if (sends)
        {
            _unreceived++;
        }

        if (--_live == 0)
        {
            idle = _idleWaiters;
            _idleWaiters = null;
        }

        _lock.Exit();

        if (sends)
        {
            _results!.TrySend((value, error is null)); // unbounded and never closed: always accepted
        }

        _slots?.Release();
        if (firstFailure && Interlocked.Exchange(ref _cancelQueued, 1) == 0)
        {
            Runtime.Schedule(new CancelWork(this));
        }

        if (idle is not null)
        {
            foreach (Promise<bool> waiter in idle)
            {
                waiter.TrySetResult(true);
            }
        }
    }

    /// <summary>Completes when no child is live (now or later); throws the outcome if <paramref name="throws"/>.</summary>
    internal Job WaitAsync(bool throws)
    {
        _lock.Enter();
        if (_live == 0)
        {
            Exception? outcome = throws ? TakeOutcomeLocked() : null;
            _lock.Exit();
            return outcome is null ? default : Job.FromException(outcome);
        }

        var waiter = new Promise<bool>();
        (_idleWaiters ??= []).Add(waiter);
        _lock.Exit();
        return WaitSlowAsync(this, waiter, throws);

        static async Job WaitSlowAsync(ScopeCore<TResult> core, Promise<bool> waiter, bool throws)
        {
            await waiter.Job;
            if (throws)
            {
                core._lock.Enter();
                Exception? outcome = core.TakeOutcomeLocked();
                core._lock.Exit();
                if (outcome is not null)
                {
                    throw outcome;
                }
            }
        }
    }

    /// <summary>
    /// The exception awaiting the scope throws now, or null: the first failure (the others recorded for
    /// <see cref="Job.GetAllFailures"/>), else a cancellation if a child ended canceled. Marks the
    /// failures observed.
    /// </summary>
    private Exception? TakeOutcomeLocked()
    {
        if (_failures is { Count: > 0 } failures)
        {
            _observedFailures = failures.Count;
            return Job.RecordFailures(failures);
        }

        return _childCanceled ? new OperationCanceledException("A child of the scope was canceled.", CanceledToken) : null;
    }

    /// <summary>
    /// The token a cancellation of the scope carries: the caller's own when that one fired, so that
    /// the usual <c>catch (OperationCanceledException e) when (e.CancellationToken == token)</c>
    /// matches, as it does for a <c>Task</c> canceled by that token; the scope's own otherwise.
    /// </summary>
    private CancellationToken CanceledToken => _outerToken.IsCancellationRequested ? _outerToken : _token;

    /// <summary>Leaving the scope: cancel, wait for every child, report failures nobody observed.</summary>
    internal async Job DisposeAsync()
    {
        _lock.Enter();
        bool first = _state == Open;
        if (first)
        {
            _state = Disposing;
        }

        _lock.Exit();
        if (!first)
        {
            await WaitAsync(throws: false);
            return;
        }

        try
        {
            _cts.Cancel();
        }
        finally
        {
            await WaitAsync(throws: false);
            List<Exception>? unobserved = null;
            _lock.Enter();
            _state = Disposed;
            if (_failures is { } failures && failures.Count > _observedFailures)
            {
                unobserved = failures.GetRange(_observedFailures, failures.Count - _observedFailures);
                _observedFailures = failures.Count;
            }

            _lock.Exit();
            _cts.Dispose();
            foreach (Exception e in unobserved ?? [])
            {
                Runtime.RaiseUnobservedException(e);
            }
        }
    }

    /// <summary>Starts the one enumeration of a collecting scope.</summary>
    internal void BeginEnumeration()
    {
        _lock.Enter();
        bool busy = _enumerating;
        _enumerating = true;
        _lock.Exit();
        if (busy)
        {
            throw new InvalidOperationException("A JobScope<T> can be enumerated by one consumer at a time.");
        }
    }

    internal void EndEnumeration()
    {
        _lock.Enter();
        _enumerating = false;
        _lock.Exit();
    }

    /// <summary>
    /// The next result in completion order (the enumeration protocol): false once no child is live and
    /// every item was received; throws the scope's outcome then.
    /// </summary>
    internal async Job<(bool HasValue, TResult Value)> NextAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            _lock.Enter();
            bool done = _live == 0 && _unreceived == 0;
            Exception? outcome = done ? TakeOutcomeLocked() : null;
            _lock.Exit();
            if (done)
            {
                if (outcome is not null)
                {
                    throw outcome;
                }

                return (false, default!);
            }

            (TResult value, bool hasValue) = await _results!.ReceiveAsync(cancellationToken);
            _lock.Enter();
            _unreceived--;
            _lock.Exit();
            if (hasValue)
            {
                return (true, value);
            }
        }
    }

    /// <summary>Step 5: the first failure's cancellation, run on the runtime.</summary>
    private sealed class CancelWork(ScopeCore<TResult> core) : WorkItem
    {
        internal override void Execute(PerThread state)
        {
            try
            {
                core.Cancel();
            }
            catch (Exception e)
            {
                // A token callback threw: nobody awaits this work item, so it is reported like a
                // detached job's failure.
                core.Runtime.RaiseUnobservedException(e);
            }
        }
    }
}
