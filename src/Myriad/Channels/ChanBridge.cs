using System;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;

namespace Myriad.Channels;

/// <summary>The <see cref="ChannelReader{T}"/> and <see cref="ChannelWriter{T}"/> of one <see cref="Chan{T}"/>.</summary>
/// <remarks>
/// The reader is in ChanBridge.Reader.cs. A view that must wait returns a <c>ValueTask</c> over one of
/// the cells of ChanBridge.Cells.cs, which keep the disposal rule of every hand-off for a job that
/// awaits the view: a job whose runtime will never run it again is handed nothing (see
/// <see cref="ViewCell{TResult}"/>).
/// </remarks>
internal sealed partial class ChanBridge<T>(Chan<T> channel)
{
    private ChanReader? _reader;
    private ChanWriter? _writer;

    internal ChannelReader<T> Reader => _reader ?? Interlocked.CompareExchange(ref _reader, new ChanReader(channel), null) ?? _reader;

    internal ChannelWriter<T> Writer => _writer ?? Interlocked.CompareExchange(ref _writer, new ChanWriter(channel), null) ?? _writer;

    internal void OnClosed() => Volatile.Read(ref _reader)?.CheckCompleted();

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

        /// <summary>A waiting send is awaited through a <see cref="WriteCell"/>, so that a send of a job whose runtime was disposed keeps its item, as <see cref="Chan{T}.SendAsync"/>'s does.</summary>
        public override ValueTask WriteAsync(T item, CancellationToken cancellationToken = default)
        {
            Job send = channel.SendAsync(item, cancellationToken);
            return send.IsCompleted ? send.AsValueTask() : WriteCell.Start(send._inner);
        }
    }
}
