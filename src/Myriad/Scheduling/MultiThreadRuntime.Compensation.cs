using System;
using System.Threading;

namespace Myriad.Scheduling;

public sealed partial class MultiThreadRuntime
{
    /// <summary>Spare threads alive (see <see cref="SpareWorker"/>); the disposal completes only once this is 0.</summary>
    private int _liveSpares;

    private long _sparesStarted;

    /// <summary>Spare threads alive now (diagnostics and tests).</summary>
    internal int LiveSpareCount => Volatile.Read(ref _liveSpares);

    /// <summary>
    /// Whether a worker or spare may block without running work (see <c>BlockingWaiter</c>, "Stack
    /// depth"): while a spare thread can still start, the watchdog hands the queued work to one once
    /// every thread is stuck; with all of them in use (or none allowed) the blocked wait could be
    /// the one that nothing is left to serve.
    /// </summary>
    internal bool MayBlockWithoutHelping => LiveSpareCount < _options.MaxSpareThreads;

    /// <summary>
    /// A worker is about to block without running work while its run queue or next-job slot holds
    /// some: notify now, as a push that found the queue in view does, rather than leave that work to
    /// the lazy wake's delay or to the watchdog (a parked sibling steals it at once; with none
    /// parked, the watchdog is armed and starts a spare once every worker is stuck).
    /// </summary>
    internal void NotifyWorkOfBlockingWorker() => _idle.NotifyWork();

    /// <summary>Spare threads started so far (diagnostics and tests).</summary>
    internal long SparesStarted => Volatile.Read(ref _sparesStarted);

    /// <summary>0, then 1 once <see cref="FinishDisposal"/> ran: once set, never unset.</summary>
    private int _disposalFinished;

    /// <summary>
    /// Compensation for a blocked worker: the watchdog saw queued work that no worker took for a whole
    /// <see cref="RuntimeOptions.SpareThreadDelay"/> while no worker was parked or searching, so no
    /// wake could help. Every worker is then stuck in an item: blocked on something Myriad cannot see
    /// (a <c>Task.Result</c> whose task needs this runtime, a lock, I/O) or computing for long. A
    /// fixed-size pool would deadlock on the first case; a spare thread runs the queued work until
    /// the stall is over, as the .NET thread pool injects threads when its workers starve and Go's
    /// monitor hands a processor away from a thread blocked in a system call.
    /// </summary>
    /// <remarks>
    /// <para><b>Protocol.</b>
    /// 1. Reserve a slot: increment <c>_liveSpares</c>; give it back if that exceeds
    ///    <see cref="RuntimeOptions.MaxSpareThreads"/>, or if every worker has already left after
    ///    disposal (nothing is blocked then).
    /// 2. Start the spare; it runs queued work and leaves once it finds none for a whole delay, or
    ///    once no worker is stuck any more (see <see cref="SpareWorker"/>, step 4).
    /// 3. On leaving it decrements <c>_liveSpares</c> (full fence) and then reads the exited-worker
    ///    count; the last worker to leave increments that count (full fence) and then reads
    ///    <c>_liveSpares</c>. Whichever of them sees the other gone finishes the disposal; both may
    ///    (and so may the disposing thread), so <see cref="FinishDisposal"/> completes it once, after
    ///    the last of them finished abandoning.</para>
    /// </remarks>
    private void TryStartSpare()
    {
        int max = _options.MaxSpareThreads;
        if (Interlocked.Increment(ref _liveSpares) > max || (_shutdown && Volatile.Read(ref _exitedWorkers) == _workers.Length))
        {
            Interlocked.Decrement(ref _liveSpares); // step 1 refused; the last one out may be us
            if (_shutdown && IsDisposedAndDrained)
            {
                FinishDisposal();
            }

            return;
        }

        try
        {
            new SpareWorker(this).Start();
        }
        catch (Exception e) when (e is OutOfMemoryException or ThreadStartException)
        {
            // No thread now (no memory, or no descriptor for a new thread: the runtime raises
            // OutOfMemoryException for both). A spare is best effort: give the slot back as a
            // leaving spare would (step 3), so the count cannot stay raised and hold up the
            // disposal, and let a later watchdog tick try again. Thrown on, it would end the
            // watchdog's thread, and with it the process.
            OnSpareExited();
            return;
        }

        Interlocked.Increment(ref _sparesStarted);
    }

    /// <summary>Step 3, on the spare's thread as it leaves.</summary>
    internal void OnSpareExited()
    {
        if (Interlocked.Decrement(ref _liveSpares) == 0 && _shutdown && Volatile.Read(ref _exitedWorkers) == _workers.Length)
        {
            FinishDisposal();
        }
    }

    /// <summary>Threads inside <see cref="FinishDisposal"/> now (the last worker or spare, the disposing thread).</summary>
    private int _finishing;

    /// <summary>
    /// The drain is over (every worker and spare left): abandon what still arrived, stop the watchdog
    /// and complete the disposal. Its completing part runs once.
    /// </summary>
    /// <remarks>
    /// <para>Several threads may get here at once: a spare that leaves last (step 3 of the spare
    /// protocol) and the disposing thread, which sees the spare count reach zero at that spare's
    /// decrement. Both then take leftovers from the same queues, and abandoning one can give back
    /// what a hand-off put in it (an item, a lock: <c>StateMachineBox.Abandon</c>). The disposal
    /// completes only once every one of them has finished abandoning, so that when <c>Dispose</c>
    /// or <c>DisposeAsync</c> returns, such an item is back in its channel and such a lock is free.
    /// Completing at the first exchange instead let the disposal end while a leaving spare was still
    /// giving back what it had taken from the queue.</para>
    /// <para><b>Protocol.</b>
    /// 1. Enter: increment <c>_finishing</c> (full fence).
    /// 2. Refuse resumes, then abandon every leftover on this thread.
    /// 3. Leave: decrement <c>_finishing</c>; whoever brings it to zero completes the disposal, once
    ///    (<c>_disposalFinished</c>). A thread still inside keeps the count above zero, so the one
    ///    that leaves last completes it, after its own abandonments. A thread that enters after the
    ///    completion finds only work that arrived after it, and the count brings it to zero again.</para>
    /// </remarks>
    private void FinishDisposal()
    {
        Interlocked.Increment(ref _finishing);
        RuntimeRegistry.RefuseResumes(this); // hand-offs skip this runtime's waiting jobs from now on
        AbandonLeftovers();
        if (Interlocked.Decrement(ref _finishing) == 0 && Interlocked.Exchange(ref _disposalFinished, 1) == 0)
        {
            _watchdogParker.Unpark();
            CompleteDisposal();
        }
    }

    /// <summary>
    /// For the disposing thread, after its own <see cref="FinishDisposal"/>: waits until the disposal
    /// completed, that is until a spare that finishes the disposal beside it is done abandoning.
    /// Short: a spare abandons without running user code (a job ends canceled; a continuation that is
    /// not a job's goes to the thread pool, since the spare's thread has a scheduler context).
    /// </summary>
    private void WaitForDisposalFinished()
    {
        SpinWait spin = default;
        while (Volatile.Read(ref _disposalFinished) == 0)
        {
            spin.SpinOnce();
        }
    }
}
