using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Jobs;

namespace Myriad.Channels;

internal sealed partial class ChanBridge<T>
{
    /// <summary>
    /// The reader. <c>_kept</c> holds items that <see cref="WaitToReadAsync"/> received (it cannot wait
    /// for an item without taking it); every read takes from it first, so the reader's own order is
    /// the channel's. <c>_inFlight</c> counts the reader's cells (ChanBridge.Cells.cs) not yet settled,
    /// from before a cell's receive starts until its item was handed out (kept, for a wait), given
    /// back, or it ended without one: an item such a cell took is out of the channel but not yet
    /// handed out, so <see cref="CheckCompleted"/> waits for it. Both guarded by <c>_gate</c>.
    /// </summary>
    /// <remarks>Lock order: <c>_gate</c>, then the channel's lock (<see cref="Count"/>,
    /// <see cref="CheckCompleted"/>); the channel never calls into the reader while it holds its lock.</remarks>
    private sealed class ChanReader(Chan<T> channel) : ChannelReader<T>
    {
        private readonly Lock _gate = new();
        private readonly ItemRing<T> _kept = new(Chan<T>.UnboundedCapacity);
        private int _inFlight;
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

        /// <summary>Counts a cell in flight, then starts its receive.</summary>
        internal Job<ReceiveResult<T>> BeginReceive(CancellationToken cancellationToken)
        {
            lock (_gate)
            {
                _inFlight++;
            }

            try
            {
                return channel.ReceiveOkAsync(cancellationToken);
            }
            catch
            {
                Settled();
                throw;
            }
        }

        /// <summary>A cell settled: it handed out its item, or ended without one.</summary>
        internal void Settled()
        {
            lock (_gate)
            {
                _inFlight--;
            }

            CheckCompleted();
        }

        /// <summary>A wait's cell settled with an item, which the reader keeps for its next read.</summary>
        internal void Keep(T item)
        {
            lock (_gate)
            {
                _kept.Enqueue(item);
                _inFlight--;
            }
        }

        /// <summary>
        /// A cell settled by giving its item back (its job can no longer run): to the channel (a waiting
        /// receiver, the front of the buffer, or a sender's place), else, on a closed channel with no
        /// room, to the front of what the reader keeps. Never dropped.
        /// </summary>
        internal void GiveBack(T item)
        {
            if (!channel.TryGiveBack(item))
            {
                lock (_gate)
                {
                    _kept.EnqueueFront(item);
                }
            }

            Settled();
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
                _completion.TrySetException(error);
            }
            else
            {
                _completion.TrySetResult();
            }
        }
    }
}
