using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Jobs;

namespace Myriad.Channels;

/// <summary>The <see cref="ChannelReader{T}"/> and <see cref="ChannelWriter{T}"/> of one <see cref="Chan{T}"/>.</summary>
internal sealed class ChanBridge<T>(Chan<T> channel)
{
    private ChanReader? _reader;
    private ChanWriter? _writer;

    internal ChannelReader<T> Reader => _reader ?? Interlocked.CompareExchange(ref _reader, new ChanReader(channel), null) ?? _reader;

    internal ChannelWriter<T> Writer => _writer ?? Interlocked.CompareExchange(ref _writer, new ChanWriter(channel), null) ?? _writer;

    internal void OnClosed() => Volatile.Read(ref _reader)?.CheckCompleted();

    /// <summary>
    /// The reader. <c>_kept</c> holds items that <see cref="WaitToReadAsync"/> received (it cannot wait
    /// for an item without taking it); every read takes from it first, so the reader's own order is
    /// the channel's. <c>_receiving</c> counts the receives of <see cref="WaitToReadAsync"/> not yet
    /// settled: an item such a receive took is out of the channel but not yet in <c>_kept</c>, so
    /// <see cref="CheckCompleted"/> waits for it. Both guarded by locking <c>_kept</c>.
    /// </summary>
    private sealed class ChanReader(Chan<T> channel) : ChannelReader<T>
    {
        private readonly Queue<T> _kept = new();
        private int _receiving;
        private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);

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
                lock (_kept)
                {
                    return _kept.Count + channel.Count;
                }
            }
        }

        public override bool TryRead([MaybeNullWhen(false)] out T item)
        {
            lock (_kept)
            {
                if (_kept.TryDequeue(out item))
                {
                    AfterRead(); // re-enters this lock (Monitor is reentrant); Completion's continuations run asynchronously
                    return true;
                }
            }

            if (channel.TryReceive(out item))
            {
                AfterRead();
                return true;
            }

            CheckCompleted();
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

            return ReadSlowAsync(cancellationToken).AsValueTask();
        }

        // Mapped where the receive completes (Jobs/JobMap.cs says why neither an async Job nor an
        // async ValueTask method): the job awaiting the read resumes on its runtime straight from the
        // send, and a read that escapes its job still completes.
        private Job<T> ReadSlowAsync(CancellationToken cancellationToken) =>
            JobMap<ReceiveResult<T>, T, ChanReader>.Start(channel.ReceiveOkAsync(cancellationToken), this, static (reader, receive) => reader.FinishRead(receive), "a channel's ChannelReader.ReadAsync");

        private T FinishRead(Job<ReceiveResult<T>> receive)
        {
            T item;
            bool ok;
            try
            {
                (item, ok) = receive.GetAwaiter().GetResult();
            }
            catch (Exception e) when (e is not OperationCanceledException && ReferenceEquals(e, channel.CloseError))
            {
                CheckCompleted();
                throw ChanErrors.ForReceive(e); // a BCL reader's ReadAsync wraps the completion error
            }

            if (!ok)
            {
                CheckCompleted();
                throw ChanErrors.ForReceive();
            }

            AfterRead();
            return item;
        }

        public override ValueTask<bool> WaitToReadAsync(CancellationToken cancellationToken = default)
        {
            if (cancellationToken.IsCancellationRequested)
            {
                return ValueTask.FromCanceled<bool>(cancellationToken);
            }

            lock (_kept)
            {
                if (_kept.Count > 0)
                {
                    return new ValueTask<bool>(true);
                }
            }

            return WaitSlowAsync(cancellationToken).AsValueTask();
        }

        // Mapped where the receive completes, for the reason ReadSlowAsync gives.
        private Job<bool> WaitSlowAsync(CancellationToken cancellationToken)
        {
            lock (_kept)
            {
                _receiving++;
            }

            Job<ReceiveResult<T>> receive;
            try
            {
                receive = channel.ReceiveOkAsync(cancellationToken);
            }
            catch
            {
                Settled();
                throw;
            }

            return JobMap<ReceiveResult<T>, bool, ChanReader>.Start(receive, this, static (reader, r) => reader.FinishWait(r), "a channel's ChannelReader.WaitToReadAsync");
        }

        private bool FinishWait(Job<ReceiveResult<T>> receive)
        {
            ReceiveResult<T> result;
            try
            {
                result = receive.GetAwaiter().GetResult();
            }
            catch
            {
                Settled();
                throw; // canceled, or closed with an error (a BCL reader's WaitToReadAsync throws it)
            }

            if (!result.Ok)
            {
                Settled();
                return false;
            }

            lock (_kept)
            {
                _kept.Enqueue(result.Value);
                _receiving--;
            }

            return true;
        }

        /// <summary>A receive of <see cref="WaitSlowAsync"/> ended without an item: the reader may now be complete.</summary>
        private void Settled()
        {
            lock (_kept)
            {
                _receiving--;
            }

            CheckCompleted();
        }

        /// <summary>After the reader handed out an item: if that was the last one of a closed channel,
        /// <see cref="Completion"/> completes now, as a BCL reader's does, not at the next read.</summary>
        private void AfterRead()
        {
            if (channel.IsClosed)
            {
                CheckCompleted();
            }
        }

        /// <summary>Completes <see cref="Completion"/> once the channel is closed and nothing is left, here or in it
        /// (canceled when it was closed with an <see cref="OperationCanceledException"/>, as a BCL channel's).</summary>
        internal void CheckCompleted()
        {
            if (_completion.Task.IsCompleted || !channel.IsCompleted)
            {
                return;
            }

            lock (_kept)
            {
                if (_kept.Count > 0 || _receiving > 0)
                {
                    return; // a later read or the receive's settling checks again
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

    private sealed class ChanWriter(Chan<T> channel) : ChannelWriter<T>
    {
        public override bool TryComplete(Exception? error = null) => channel.TryClose(error);

        public override bool TryWrite(T item)
        {
            if (channel.IsClosed)
            {
                return false;
            }

            try
            {
                return channel.TrySend(item);
            }
            catch (ChannelClosedException)
            {
                return false; // closed meanwhile: TryWrite reports, it does not throw
            }
        }

        public override ValueTask<bool> WaitToWriteAsync(CancellationToken cancellationToken = default)
        {
            if (cancellationToken.IsCancellationRequested)
            {
                return ValueTask.FromCanceled<bool>(cancellationToken);
            }

            if (!channel.IsClosed)
            {
                return new ValueTask<bool>(true);
            }

            return channel.CloseError is { } error ? ValueTask.FromException<bool>(error) : new ValueTask<bool>(false);
        }

        public override ValueTask WriteAsync(T item, CancellationToken cancellationToken = default) =>
            channel.SendAsync(item, cancellationToken).AsValueTask();
    }
}
