using System;
using System.Threading.Channels;

namespace Myriad.Channels;

/// <summary>
/// The exceptions a closed <see cref="Chan{T}"/> throws. They are the BCL's
/// <see cref="ChannelClosedException"/>, as its own channels throw, so that one
/// <c>catch (ChannelClosedException)</c> serves both kinds of channel and code written against
/// <see cref="ChannelReader{T}"/>/<see cref="ChannelWriter{T}"/> sees what it expects.
/// </summary>
internal static class ChanErrors
{
    /// <summary>A send on a closed channel (Go panics); carries the close error, if any, as its inner exception.</summary>
    internal static ChannelClosedException ForSend(Exception? closeError) =>
        new("Cannot send on a closed channel.", closeError);

    /// <summary>A receive on a channel that was closed and is drained; for the reader view
    /// (<see cref="ChannelReader{T}.ReadAsync"/>), carries the close error, if any, as its inner exception.</summary>
    internal static ChannelClosedException ForReceive(Exception? closeError = null) =>
        new("The channel is closed and holds no more items.", closeError);

    /// <summary>
    /// A <c>ReadAllAsync</c> enumerator's <c>MoveNextAsync</c> called while the previous call is still
    /// pending (the enumerator contract allows one at a time, each awaited before the next). Thrown at
    /// the call, before the channel is touched.
    /// </summary>
    internal static InvalidOperationException MoveNextWhilePending() =>
        new("MoveNextAsync was called while the previous call was still pending: await each MoveNextAsync before the next one.");

    /// <summary>
    /// What a waiting <c>MoveNextAsync</c> of a <c>ReadAllAsync</c> enumerator ends with when the
    /// enumerator is disposed before an item reached it: the read was withdrawn from the channel and
    /// took nothing. A cancellation, so that an abandoned read's task ends canceled, not faulted.
    /// </summary>
    internal static OperationCanceledException ReadWithdrawnByDispose() =>
        new("The ReadAllAsync enumerator was disposed while this MoveNextAsync was waiting: the read was withdrawn and took no item.");
}
