using System;

namespace Myriad.Channels;

/// <summary>
/// Thrown by a send on a closed <see cref="Chan{T}"/> (including a send that was waiting when the
/// channel closed), and by a receive on a channel that was closed without an error and is drained.
/// </summary>
/// <remarks>
/// Derives from <see cref="InvalidOperationException"/>, like the BCL's
/// <see cref="System.Threading.Channels.ChannelClosedException"/>: sending on a closed channel is a
/// program error in Go (a panic). A receive on a channel closed with an error throws that error
/// instead.
/// </remarks>
public sealed class ChannelClosedException : InvalidOperationException
{
    /// <summary>Creates the exception with the default message.</summary>
    public ChannelClosedException()
        : base("The channel is closed.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    public ChannelClosedException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the error the channel was closed with.</summary>
    public ChannelClosedException(string message, Exception? innerException)
        : base(message, innerException)
    {
    }

    internal static ChannelClosedException ForSend(Exception? closeError) =>
        new("Cannot send on a closed channel.", closeError);

    internal static ChannelClosedException ForReceive() =>
        new("The channel is closed and holds no more items.");
}
