using System.Runtime.CompilerServices;
using System.Collections.Generic;
using System.Threading;

namespace Myriad.Scheduling;

public sealed partial class MultiThreadRuntime
{
    private readonly IdleCoordinator _idle;

    internal IdleCoordinator Idle => _idle;

    /// <summary>
    /// Decides which workers sleep and which one to wake, so that new work never waits on a sleeping
    /// worker while an idle core could run it (no lost wake-up), and no more workers than useful
    /// search at once (no thundering herd).
    /// </summary>
    /// <remarks>
    /// <para><b>State.</b> <c>_searching</c>: workers looking for work in others' queues.
    /// <c>_idleCount</c> and <c>_idleStack</c> (under <c>_lock</c>): parked workers, most recently
    /// parked on top (a warm cache is woken first).</para>
    /// <para><b>Notify (after new work was queued, any thread).</b>
    /// 1. The work is already published (queue write), then a full fence.
    /// 2. If a worker is searching, stop: it will find the work, and if it was the last searcher it
    ///    re-checks every queue before sleeping (step 2 of Park).
    /// 3. If nobody is parked, stop: every worker is running and will reach the queues. (Arm the
    ///    watchdog, which starts a spare thread if that never happens: see TryStartSpare.)
    /// 4. Under the lock, pop a parked worker, mark it searching, and unpark it.</para>
    /// <para><b>Park (a worker that found nothing).</b>
    /// 1. Stop searching (decrement <c>_searching</c>; full fence).
    /// 2. Under the lock, push itself on the idle stack and increment <c>_idleCount</c> (full fence).
    /// 3. Re-check every queue. If anything is visible, try to take itself back off the stack and
    ///    search again (even if that exceeds the searcher bound: the work is there, and a worker
    ///    that neither searches nor sleeps would spin); if a notifier already popped it, it was
    ///    unparked (or will be) and continues.
    /// 4. Otherwise sleep on its <see cref="Parker"/>.
    /// Why no wake-up is lost: a notifier writes the queue then reads the counters; a parking worker
    /// writes the counters then reads the queues. With full fences on both sides, either the notifier
    /// sees the worker parked (and wakes it) or the worker sees the work (and takes it back).</para>
    /// <para><b>Searcher found work.</b> If it was the last searcher and more work is visible, it
    /// notifies once, so that one more worker starts searching (Go's and Tokio's rule).</para>
    /// </remarks>
    internal sealed class IdleCoordinator(MultiThreadRuntime runtime)
    {
        private readonly Lock _lock = new();
        private readonly Stack<Worker> _idleStack = new();
        private readonly List<Worker> _keep = new();
        private int _searching;
        private int _idleCount;

        internal int SearchingCount => Volatile.Read(ref _searching);

        internal int IdleCount => Volatile.Read(ref _idleCount);

        // AggressiveOptimization here and below: optimized from the first call, so that one-shot
        // programs do not run the spawn path as tier-0 code (docs/design.md, "Cold runs").
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
        internal void NotifyWork() => NotifyWork(watchForStall: true);

        /// <summary>
        /// <see cref="NotifyWork()"/>; with <paramref name="watchForStall"/> false it never arms the
        /// watchdog (the caller is the arming path, whose watchdog could not start: arming again
        /// from here would recurse).
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
        internal void NotifyWork(bool watchForStall)
        {
            Interlocked.MemoryBarrier();
            if (Volatile.Read(ref _searching) != 0)
            {
                return;
            }

            if (Volatile.Read(ref _idleCount) == 0)
            {
                if (!watchForStall)
                {
                    return;
                }

                // Every worker is running an item. They reach the queues when it returns, unless it
                // blocks: the watchdog then sees the work stall and starts a spare thread.
                runtime.WatchForStall();
                return;
            }

            Worker? toWake = null;
            lock (_lock)
            {
                if (_searching == 0 && _idleStack.Count > 0)
                {
                    toWake = _idleStack.Pop();
                    Interlocked.Decrement(ref _idleCount);
                    Interlocked.Increment(ref _searching);
                    toWake.IsSearching = true;
                }
            }

            toWake?.Unpark();
        }

        /// <summary>A worker asks to search; refused when enough workers already search.</summary>
        internal bool TryStartSearching(Worker worker)
        {
            if (worker.IsSearching)
            {
                return true;
            }

            int searching = Volatile.Read(ref _searching);
            if (searching >= runtime.Options.MaxSearchingWorkers)
            {
                return false;
            }

            Interlocked.Increment(ref _searching);
            worker.IsSearching = true;
            return true;
        }

        /// <summary>A searching worker found work: stop searching and, if it was the last, pass the baton.</summary>
        internal void SearchSucceeded(Worker worker)
        {
            if (!worker.IsSearching)
            {
                return;
            }

            worker.IsSearching = false;
            if (Interlocked.Decrement(ref _searching) == 0 && runtime.AnyWorkVisible())
            {
                NotifyWork();
            }
        }

        /// <summary>Steps 1-4 of Park. Returns when woken, when work appeared, or at shutdown.</summary>
        internal void Park(Worker worker)
        {
            StopSearching(worker);

            lock (_lock)
            {
                _idleStack.Push(worker);
                Interlocked.Increment(ref _idleCount);
            }

            if (runtime.AnyWorkVisible() || runtime.IsShuttingDown)
            {
                lock (_lock)
                {
                    if (TryRemove(worker))
                    {
                        Interlocked.Decrement(ref _idleCount);

                        // It saw work, so it searches even past the searcher bound: a worker
                        // that was refused searching must not spin between here and its loop.
                        Interlocked.Increment(ref _searching);
                        worker.IsSearching = true;
                        return;
                    }
                }

                // A notifier popped us and marked us searching; its unpark may still be in flight.
                worker.Parker.Park();
                return;
            }

            worker.ParkCount++;
            worker.Sleep(this); // on the parker, or in the I/O driver (see Worker.Io.cs)
        }

        /// <summary>Step 1 of Park, also taken by a worker leaving its loop: it is no longer searching.</summary>
        internal void StopSearching(Worker worker)
        {
            if (worker.IsSearching)
            {
                worker.IsSearching = false;
                Interlocked.Decrement(ref _searching);
            }
        }

        /// <summary>
        /// A worker that woke without being popped (I/O events, a stale permit) takes itself off the
        /// idle stack; if a notifier popped it meanwhile it is searching already and nothing changes.
        /// </summary>
        internal void LeaveIdle(Worker worker)
        {
            lock (_lock)
            {
                if (TryRemove(worker))
                {
                    Interlocked.Decrement(ref _idleCount);
                }
            }
        }

        internal void WakeAll()
        {
            Worker[] toWake;
            lock (_lock)
            {
                toWake = _idleStack.ToArray();
                _idleStack.Clear();
                Interlocked.Exchange(ref _idleCount, 0);
            }

            foreach (Worker worker in toWake)
            {
                worker.Unpark();
            }

            foreach (Worker worker in runtime.Workers)
            {
                worker.Unpark();
            }
        }

        private bool TryRemove(Worker worker)
        {
            if (!_idleStack.Contains(worker))
            {
                return false;
            }

            // A reused list (under the lock): a worker parked in the I/O driver leaves the stack this
            // way at every wake, which must not allocate.
            List<Worker> keep = _keep;
            keep.Clear();
            while (_idleStack.Count > 0)
            {
                Worker w = _idleStack.Pop();
                if (w != worker)
                {
                    keep.Add(w);
                }
            }

            for (int i = keep.Count - 1; i >= 0; i--)
            {
                _idleStack.Push(keep[i]);
            }

            keep.Clear();

            return true;
        }
    }
}
