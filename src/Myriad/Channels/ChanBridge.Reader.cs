using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Coordination;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Channels;

internal sealed partial class ChanBridge<T>
{
    /// <summary>What <see cref="ChanReader.CloseRead"/> did with a read whose receive found the channel closed and drained.</summary>
    private enum ClosedRead
    {
        /// <summary>The reader kept an item: the read takes it.</summary>
        Item,

        /// <summary>Another cell may still bring an item: the read waits for it, parked.</summary>
        Parked,

        /// <summary>Nothing can come any more: the read ends (settled).</summary>
        Closed,
    }

    /// <summary>What <see cref="ChanReader.OfferToReads"/> did with an item a wait received.</summary>
    private enum Offered
    {
        /// <summary>No read waits: the wait hands the item to its own job (it keeps it for the reader).</summary>
        NoRead,

        /// <summary>A parked read takes it (the caller hands it over); the wait waits on.</summary>
        ToParkedRead,

        /// <summary>Every item the reader kept went to waiting receives; the wait waits on.</summary>
        Served,

        /// <summary>The item is kept (no waiting receive could take it yet); the wait settled: it completes true.</summary>
        Kept,
    }

    /// <summary>A read cell parked on a closed channel (see <see cref="ChanReader"/>): it ends with an item or with the close.</summary>
    private interface IParkedRead
    {
        /// <summary>An item came for the parked read (it is still counted in flight).</summary>
        void TakeItem(T item, PerThread state);

        /// <summary>Nothing can come any more: the read ends with the close (it was settled already).</summary>
        void EndClosed(PerThread state);
    }

    /// <summary>
    /// The reader. Its waits are cells of ChanBridge.Cells.cs: a read (<c>ReadAsync</c>, an
    /// enumeration's <c>MoveNextAsync</c>) or a wait (<c>WaitToReadAsync</c>), each waiting in a receive
    /// of the channel. A Myriad channel has no "wait until readable" without taking the item, so a wait
    /// takes it and the reader keeps it for its next read. All state below is guarded by <c>_gate</c>.
    /// </summary>
    /// <remarks>
    /// <para><b>State.</b>
    /// <c>_kept</c>: items a wait received, oldest first; every read takes from it first, so the
    /// reader's own order is the channel's.
    /// <c>_inFlight</c>: cells not yet settled, counted from before a cell's receive starts until it
    /// handed its item out (kept it, for a wait), gave it back, or ended without one. An item such a
    /// cell took is out of the channel and not yet handed out: <see cref="CheckCompleted"/> waits for it.
    /// <c>_reading</c>: reads whose receive still waits in the channel (counted from before it starts).
    /// <c>_parked</c>: reads whose receive found the channel closed and drained while other cells were
    /// in flight (each may still bring an item); still counted in <c>_inFlight</c>.
    /// Invariant: <c>_parked</c> is empty while <c>_kept</c> is not (an item for the reader goes to a
    /// parked read first, and a read parks only when nothing is kept).</para>
    /// <para><b>Serving a waiting read</b> (a BCL reader gives an item to a waiting read before it wakes a
    /// wait). The wait is ahead of the read in the channel's queue and takes the item:
    /// 1. A wait whose receive got an item while reads wait (<see cref="OfferToReads"/>) adds it to
    ///    <c>_kept</c>, then serves (<see cref="ServeWaitingReads"/>): while items are kept and reads
    ///    wait, it claims the oldest waiting receiver of the channel under both locks, takes the oldest
    ///    kept item, and completes that receiver with it after leaving them. The wait then waits again
    ///    with a fresh receive, as a BCL wait goes on waiting, unless an item stayed kept (no receiver
    ///    could take it yet): then it completes true.
    /// 2. A read counts itself in <c>_reading</c> before its receive starts, and serves once the receive
    ///    is queued.
    /// No item is kept while a read's receive waits: whichever of steps 1 and 2 takes <c>_gate</c>
    /// second sees the other's write (the kept item, or the count with the queued receive).</para>
    /// <para><b>Closing.</b> A read whose receive found the channel closed and drained
    /// (<see cref="CloseRead"/>) takes a kept item if there is one; else, while other cells are in
    /// flight (a wait's item may be on its way), it parks; else it ends, and releases the parked reads.
    /// An item that reaches the reader goes to a parked read first (<see cref="Keep"/>,
    /// <see cref="OfferToReads"/>, <see cref="GiveBack"/>); when only parked reads are left in flight
    /// (<see cref="ReleaseParkedLocked"/>), they end with the close. A parked read's receive is over, so
    /// its token no longer cancels it: it waits for the cells in flight, each of which settles once its
    /// item reached its job's runtime or came back (one carried to a single-threaded runtime that
    /// nobody drives settles when that runtime is driven or disposed).</para>
    /// <para>Lock order: <c>_gate</c>, then the channel's lock; the channel never calls into the reader
    /// while it holds its lock. Completions (of cells, receivers, parked reads) run after <c>_gate</c>
    /// is released.</para>
    /// </remarks>
    private sealed class ChanReader(Chan<T> channel) : ChannelReader<T>
    {
        private readonly Lock _gate = new();
        private readonly ItemRing<T> _kept = new(Chan<T>.UnboundedCapacity);
        private readonly Queue<IParkedRead> _parked = new();
        private int _inFlight;
        private int _reading;
        private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);

        internal Chan<T> Channel => channel;

        public override Task Completion
        {
            get
            {
                CheckCompleted();
                return _completion.Task;
            }
        }

        public override bool CanCount => true;

        public override int Count
        {
            get
            {
                lock (_gate)
                {
                    return _kept.Count + channel.Count;
                }
            }
        }

        public override bool TryRead([MaybeNullWhen(false)] out T item)
        {
            if (TryTakeKept(out item) || channel.TryReceive(out item))
            {
                CheckCompleted(); // that may have been the last item of a closed channel
                return true;
            }

            CheckCompleted();
            return false;
        }

        private bool TryTakeKept([MaybeNullWhen(false)] out T item)
        {
            lock (_gate)
            {
                if (_kept.Count > 0)
                {
                    item = _kept.Dequeue();
                    return true;
                }
            }

            item = default;
            return false;
        }

        public override ValueTask<T> ReadAsync(CancellationToken cancellationToken = default)
        {
            // The token first, as a BCL reader's: a canceled read takes nothing, even when an item is there.
            if (cancellationToken.IsCancellationRequested)
            {
                return ValueTask.FromCanceled<T>(cancellationToken);
            }

            if (TryRead(out T? item))
            {
                return new ValueTask<T>(item);
            }

            return ReadCell.Start(this, cancellationToken);
        }

        public override ValueTask<bool> WaitToReadAsync(CancellationToken cancellationToken = default)
        {
            if (cancellationToken.IsCancellationRequested)
            {
                return ValueTask.FromCanceled<bool>(cancellationToken);
            }

            lock (_gate)
            {
                if (_kept.Count > 0)
                {
                    return new ValueTask<bool>(true);
                }
            }

            return WaitCell.Start(this, cancellationToken);
        }

        /// <summary>An enumeration that reads through this reader, its waits done by a cell of its own (see <see cref="ReaderEnumerator"/>).</summary>
        public override IAsyncEnumerable<T> ReadAllAsync(CancellationToken cancellationToken = default) => new ReaderRange(this, cancellationToken);

        /// <summary>Counts a cell in flight (and a read in <c>_reading</c>: step 2 of serving), then starts its receive.</summary>
        internal Job<ReceiveResult<T>> BeginReceive(CancellationToken cancellationToken, bool read)
        {
            lock (_gate)
            {
                _inFlight++;
                if (read)
                {
                    _reading++;
                }
            }

            Job<ReceiveResult<T>> receive;
            try
            {
                receive = channel.ReceiveOkAsync(cancellationToken);
            }
            catch
            {
                Settled(read);
                throw;
            }

            if (read && !receive.IsCompleted)
            {
                ServeWaitingReads(); // step 2: an item kept meanwhile goes to a waiting receive, maybe this one
            }

            return receive;
        }

        /// <summary>A read's receive completed and its item travels on to its job: it no longer waits in the channel.</summary>
        internal void ReadEnded()
        {
            lock (_gate)
            {
                _reading--;
            }
        }

        /// <summary>A cell settled: it handed out its item, or ended without one (<paramref name="readEnded"/>: a read whose receive was still counted).</summary>
        internal void Settled(bool readEnded)
        {
            List<IParkedRead>? released;
            lock (_gate)
            {
                _inFlight--;
                if (readEnded)
                {
                    _reading--;
                }

                released = ReleaseParkedLocked();
            }

            EndParked(released);
            CheckCompleted();
        }

        /// <summary>A wait ended without an item; whether the reader keeps one (a BCL wait then returns true, closed or not).</summary>
        internal bool WaitEnded()
        {
            bool kept;
            List<IParkedRead>? released;
            lock (_gate)
            {
                _inFlight--;
                kept = _kept.Count > 0;
                released = ReleaseParkedLocked();
            }

            EndParked(released);
            CheckCompleted();
            return kept;
        }

        /// <summary>
        /// Step 1 of serving, for an item a wait's receive got (before the wait hands anything to its
        /// job): to a parked read, or, while reads wait, into <c>_kept</c> and on to waiting receives.
        /// </summary>
        internal Offered OfferToReads(T item, out IParkedRead? parked)
        {
            lock (_gate)
            {
                if (_parked.TryDequeue(out parked))
                {
                    return Offered.ToParkedRead;
                }

                if (_reading == 0)
                {
                    return Offered.NoRead;
                }

                _kept.Enqueue(item);
            }

            if (!ServeWaitingReads())
            {
                return Offered.Served;
            }

            Settled(readEnded: false); // the wait ends here: it completes true
            return Offered.Kept;
        }

        /// <summary>A wait's cell settled with an item, on its job's runtime: a parked read takes it, else the reader keeps it (and serves waiting reads, step 1).</summary>
        internal void Keep(T item, PerThread state)
        {
            IParkedRead? parked;
            bool serve;
            lock (_gate)
            {
                _inFlight--;
                if (_parked.TryDequeue(out parked))
                {
                    serve = false;
                }
                else
                {
                    _kept.Enqueue(item);
                    serve = _reading > 0;
                }
            }

            if (parked is not null)
            {
                parked.TakeItem(item, state);
            }
            else if (serve)
            {
                ServeWaitingReads();
            }
        }

        /// <summary>
        /// A cell settles by giving its item back (its job can no longer run): to a parked read, else to
        /// an open channel (a waiting receiver, the front of the buffer, or a sender's place), else, on
        /// a closed channel, to the front of what the reader keeps. Never dropped.
        /// </summary>
        internal void GiveBack(T item, bool readEnded, PerThread state)
        {
            IParkedRead? parked;
            lock (_gate)
            {
                _parked.TryDequeue(out parked);
            }

            // 1. A parked read takes it. 2. Else an open channel takes it back. 3. Else (closed) the
            // reader keeps it, where a read that found the channel closed looks (CloseRead): back in
            // a closed channel's buffer, a read whose receive already saw "closed and drained" would
            // end closed with the item still there. Step 3 looks for a parked read again under the
            // same lock as the keep: one may have parked after step 1, while this cell still counted
            // as in flight, and kept items are handed only to reads that come later, so it would
            // wait for good.
            if (parked is null && !channel.TryGiveBack(item, onlyIfOpen: true))
            {
                lock (_gate)
                {
                    if (!_parked.TryDequeue(out parked))
                    {
                        _kept.EnqueueFront(item);
                    }
                }
            }

            if (parked is not null)
            {
                parked.TakeItem(item, state);
            }

            Settled(readEnded); // after the item is back: whoever sees the cell settled sees the item
        }

        /// <summary>
        /// A read whose receive found the channel closed and drained (or closed with an error and
        /// drained): it takes a kept item (it stays in flight until it hands it out), or parks while
        /// another cell may still bring one, or ends (settled) and releases the parked reads.
        /// </summary>
        internal ClosedRead CloseRead(IParkedRead read, bool readEnded, out T item)
        {
            List<IParkedRead>? released;
            lock (_gate)
            {
                if (readEnded)
                {
                    _reading--;
                }

                if (_kept.Count > 0)
                {
                    item = _kept.Dequeue();
                    return ClosedRead.Item;
                }

                item = default!; // only read for ClosedRead.Item
                if (_inFlight - _parked.Count > 1)
                {
                    _parked.Enqueue(read); // some cell other than this one and the parked is unsettled
                    return ClosedRead.Parked;
                }

                _inFlight--;
                released = ReleaseParkedLocked();
            }

            EndParked(released);
            CheckCompleted();
            return ClosedRead.Closed;
        }

        /// <summary>
        /// Step 1 and 2's serving: while items are kept and reads wait, claims the oldest waiting
        /// receiver of the channel, takes the oldest kept item, and completes the receiver with it
        /// outside both locks. Returns whether an item is still kept.
        /// </summary>
        private bool ServeWaitingReads()
        {
            while (true)
            {
                IWaiter<T>? receiver;
                T item;
                lock (_gate)
                {
                    if (_kept.Count == 0)
                    {
                        return false;
                    }

                    if (_reading == 0 || (receiver = channel.TryClaimWaitingReceiver()) is null)
                    {
                        return true;
                    }

                    item = _kept.Dequeue();
                }

                receiver.Complete(item);
            }
        }

        /// <summary>
        /// Under <c>_gate</c>: once every cell still in flight is a parked read and nothing is kept,
        /// nothing can bring an item any more; the parked reads settle here and end with the close (the
        /// caller ends them after releasing the lock).
        /// </summary>
        private List<IParkedRead>? ReleaseParkedLocked()
        {
            if (_parked.Count == 0 || _kept.Count > 0 || _inFlight != _parked.Count)
            {
                return null;
            }

            var released = new List<IParkedRead>(_parked);
            _parked.Clear();
            _inFlight -= released.Count;
            return released;
        }

        private static void EndParked(List<IParkedRead>? released)
        {
            if (released is null)
            {
                return;
            }

            PerThread state = PerThread.Current;
            foreach (IParkedRead read in released)
            {
                read.EndClosed(state);
            }
        }

        /// <summary>Completes <see cref="Completion"/> once the channel is closed and nothing is left, here or in it
        /// (canceled when it was closed with an <see cref="OperationCanceledException"/>, as a BCL channel's).</summary>
        /// <remarks>Called after everything that may have taken the last item, and after the close. The
        /// channel is read under <c>_gate</c>: a cell gives its item back before it settles, so whoever
        /// sees it settled also sees the item back in the channel.</remarks>
        internal void CheckCompleted()
        {
            if (_completion.Task.IsCompleted || !channel.IsClosed)
            {
                return;
            }

            lock (_gate)
            {
                if (_kept.Count > 0 || _inFlight > 0 || !channel.IsCompleted)
                {
                    return; // a later read or a cell's settling checks again
                }
            }

            if (channel.CloseError is OperationCanceledException canceled)
            {
                _completion.TrySetCanceled(canceled.CancellationToken);
            }
            else if (channel.CloseError is { } error)
            {
                // Observed here, as the BCL's channels do: Completion is there to be awaited if
                // wanted, and a reader nobody asks for it must not raise UnobservedTaskException
                // when the faulted task is finalized.
                if (_completion.TrySetException(error))
                {
                    _ = _completion.Task.Exception;
                }
            }
            else
            {
                _completion.TrySetResult();
            }
        }
    }
}
