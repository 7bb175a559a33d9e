using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Coordination;

namespace Myriad.Channels;

public sealed partial class Chan<T>
{
    /// <summary>
    /// The System.Threading.Channels views of channels that asked for them. Kept beside the channel
    /// rather than in a field of it: a channel is sized for a million instances, and most never need a
    /// view. Looked up only by <see cref="Reader"/>/<see cref="Writer"/> and by <see cref="Close"/>.
    /// </summary>
    private static readonly ConditionalWeakTable<Chan<T>, ChanBridge<T>> s_bridges = new();

    private ChanBridge<T> Bridge => s_bridges.GetValue(this, static c => new ChanBridge<T>(c));

    /// <summary>
    /// This channel as a <see cref="ChannelReader{T}"/>, for APIs that consume
    /// System.Threading.Channels: <c>TryRead</c>, <c>WaitToReadAsync</c>, <c>ReadAsync</c>,
    /// <c>ReadAllAsync</c>, <c>Count</c>, <c>Completion</c>. Every read gives the same reader.
    /// </summary>
    /// <remarks>
    /// <para>A Myriad channel has no "wait until readable" without taking the item, so
    /// <c>WaitToReadAsync</c> receives the next item and keeps it in the reader, whose next
    /// <c>TryRead</c> or <c>ReadAsync</c> hands it out first. Such a kept item is visible only through
    /// the reader (and counted by its <c>Count</c>): do not mix the reader with direct receives on the
    /// same channel when the order between them matters. Several consumers sharing the reader through
    /// <c>WaitToReadAsync</c>/<c>TryRead</c> loops may likewise see items out of order (a wait takes its
    /// item a step before it keeps it, and another consumer's <c>TryRead</c> may take the next one in
    /// between); <c>ReadAsync</c> and <c>ReadAllAsync</c> keep the channel's order.</para>
    /// <para><c>Completion</c> completes once the channel is closed and drained, whether its last item
    /// went out through the reader or through a direct receive (<see cref="ReceiveAsync"/>,
    /// <see cref="TryReceive"/>, <see cref="ReadAllAsync"/>, a select), and not while the reader keeps
    /// an item <c>WaitToReadAsync</c> took; it faults with the close error (is canceled by an
    /// <see cref="OperationCanceledException"/>). As a BCL reader's,
    /// <c>ReadAsync</c> on a channel closed with an error throws a
    /// <see cref="ChannelClosedException"/> whose inner exception is that error; <c>WaitToReadAsync</c>
    /// throws the error itself.</para>
    /// </remarks>
    public ChannelReader<T> Reader => Bridge.Reader;

    /// <summary>
    /// This channel as a <see cref="ChannelWriter{T}"/>, for APIs that produce into
    /// System.Threading.Channels: <c>TryWrite</c> (false when full or closed), <c>WriteAsync</c> (waits
    /// for room, as <see cref="SendAsync"/>), <c>TryComplete(error)</c> (<see cref="Close"/>, false if
    /// already closed). Every read gives the same writer.
    /// </summary>
    /// <remarks><c>WaitToWriteAsync</c> completes at once: true while the channel is open, false (or the
    /// close error) once closed. A Myriad channel cannot signal free room without a send, so it does not
    /// wait for room: use <c>WriteAsync</c>, which does, rather than a <c>WaitToWriteAsync</c>/<c>TryWrite</c> loop.</remarks>
    public ChannelWriter<T> Writer => Bridge.Writer;

    /// <summary>This channel seen only from its receiving side (Go's <c>&lt;-chan T</c>).</summary>
    public ReceiveOnlyChan<T> ReceiveOnly => new(this);

    /// <summary>This channel seen only from its sending side (Go's <c>chan&lt;- T</c>).</summary>
    public SendOnlyChan<T> SendOnly => new(this);

    /// <summary>
    /// Sends every item of <paramref name="source"/>, in order, then closes the channel; if the source
    /// throws, closes the channel with that error (receivers see it after draining) and rethrows it.
    /// </summary>
    /// <param name="source">The items.</param>
    /// <param name="cancellationToken">Stops the enumeration and a waiting send; the channel is then
    /// closed with the <see cref="OperationCanceledException"/>.</param>
    /// <returns>A job that completes once everything was sent and the channel closed.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="source"/> is null.</exception>
    public Job SendAllAsync(IAsyncEnumerable<T> source, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        return SendAllCoreAsync(this, source, cancellationToken);

        static async Job SendAllCoreAsync(Chan<T> channel, IAsyncEnumerable<T> source, CancellationToken cancellationToken)
        {
            try
            {
                await foreach (T item in source.WithCancellation(cancellationToken))
                {
                    await channel.SendAsync(item, cancellationToken);
                }
            }
            catch (Exception e)
            {
                channel.TryClose(e);
                throw;
            }

            channel.TryClose(null);
        }
    }

    /// <summary>
    /// For the reader view, which passes on an item it keeps (see ChanBridge.Reader.cs): claims the
    /// oldest waiting receiver that can run (the inline receiver first, as a send does; the claim skips
    /// and cancels one whose job's runtime refuses resumes), or returns null when none waits or the
    /// channel is closed. The caller must complete the receiver with an item (<see cref="IWaiter{T}.Complete"/>)
    /// once it holds no lock. A waiting receiver means an empty buffer and no waiting sender
    /// (invariants 1 and 2), so that item reaches it exactly as a send's would.
    /// </summary>
    internal IWaiter<T>? TryClaimWaitingReceiver()
    {
        IWaiter<T>? receiver = null;
        _lock.Enter();
        if (_closed is null)
        {
            receiver = TryClaimInlineReceiverLocked() ? this : _receivers.DequeueClaimable();
        }

        _lock.Exit();
        return receiver;
    }

    /// <summary>After a close: a reader that exists may now be complete.</summary>
    private void OnClosedForBridge()
    {
        if (s_bridges.TryGetValue(this, out ChanBridge<T>? bridge))
        {
            bridge.OnClosed();
        }
    }
}
