using System;
using System.Net.Sockets;
using System.Threading;

namespace Myriad.IO;

/// <summary>What one non-blocking attempt at a read or a write came to.</summary>
internal enum AttemptOutcome : byte
{
    /// <summary>The call completed: bytes were read (0 at the end of the stream), or every byte was sent.</summary>
    Done,

    /// <summary>The call failed, or the socket was aborted (disposed) under it; the failure says which.</summary>
    Failed,

    /// <summary>The socket is not ready: retry once it is.</summary>
    WouldBlock,

    /// <summary>The operation's cancellation was requested between two sends (some bytes may have been sent).</summary>
    Canceled,
}

/// <summary>
/// The non-blocking receive and send of the driver's path, shared by the connection's fast path, its
/// parked operations' retries and the blocking calls of its <c>Stream</c> view, so that all three
/// judge a result the same way.
/// </summary>
/// <remarks>
/// <para>Closing a socket while a call is using it makes .NET disconnect it to unblock the call, which
/// then fails (ECONNABORTED, EPIPE, EINVAL) or reads an end that only the disposal caused: such a
/// result reports the registration's abort reason instead (<see cref="IoRegistration.Blame"/>).</para>
/// <para>A call that starts after the close throws the <see cref="Socket"/>'s own
/// <see cref="ObjectDisposedException"/> (naming <c>System.Net.Sockets.Socket</c>), also when its
/// caller checked the abort reason just before: the owner's <c>Dispose</c> aborts the registration
/// and then closes the socket, both between that check and the call. It becomes the abort reason too,
/// which names the connection (or the runtime), as docs/io.md promises.</para>
/// </remarks>
internal static class SocketAttempt
{
    /// <summary>One receive into <paramref name="buffer"/>.</summary>
    internal static AttemptOutcome Receive(Socket socket, Span<byte> buffer, IoRegistration registration, out int received, out Exception? failure)
    {
        SocketError error;
        try
        {
            received = socket.Receive(buffer, SocketFlags.None, out error);
        }
        catch (ObjectDisposedException disposed)
        {
            received = 0;
            failure = registration.Blame(disposed);
            return AttemptOutcome.Failed;
        }

        if (error == SocketError.Success)
        {
            failure = received == 0 && !buffer.IsEmpty ? registration.AbortError() : null;
            return failure is null ? AttemptOutcome.Done : AttemptOutcome.Failed;
        }

        return Judge(error, registration, out failure);
    }

    /// <summary>
    /// Sends as much of <paramref name="buffer"/> as the socket takes; <paramref name="sent"/> counts the
    /// bytes sent, whatever the outcome. <paramref name="cancellationToken"/> is checked between sends.
    /// </summary>
    internal static AttemptOutcome Send(Socket socket, ReadOnlySpan<byte> buffer, IoRegistration registration, CancellationToken cancellationToken, out int sent, out Exception? failure)
    {
        sent = 0;
        while (true)
        {
            int count;
            SocketError error;
            try
            {
                count = socket.Send(buffer[sent..], SocketFlags.None, out error);
            }
            catch (ObjectDisposedException disposed)
            {
                failure = registration.Blame(disposed);
                return AttemptOutcome.Failed;
            }

            if (error != SocketError.Success)
            {
                return Judge(error, registration, out failure);
            }

            sent += count;
            if (sent == buffer.Length)
            {
                failure = null;
                return AttemptOutcome.Done;
            }

            // A peer that drains as fast as this loop sends never makes it wait, and the socket's
            // sends go on succeeding until the last one returns: a disposal and a cancellation are
            // checked between sends (the latter only for promptness: the parking protocol does not
            // lose a cancellation that comes during an attempt, see IoRegistration).
            if (registration.AbortError() is { } aborted)
            {
                failure = aborted;
                return AttemptOutcome.Failed;
            }

            if (cancellationToken.IsCancellationRequested)
            {
                failure = null;
                return AttemptOutcome.Canceled;
            }
        }
    }

    /// <summary>A socket error: retry it (it would have blocked, or a signal interrupted it) or fail with it.</summary>
    private static AttemptOutcome Judge(SocketError error, IoRegistration registration, out Exception? failure)
    {
        if (error is SocketError.WouldBlock or SocketError.Interrupted)
        {
            failure = null;
            return AttemptOutcome.WouldBlock;
        }

        failure = registration.Blame(new SocketException((int)error));
        return AttemptOutcome.Failed;
    }
}
