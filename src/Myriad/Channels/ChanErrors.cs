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
}
