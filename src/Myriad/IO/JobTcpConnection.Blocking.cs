using System;
using System.Net.Sockets;
using System.Runtime.ExceptionServices;
using System.Threading;
using Myriad.Internal;

namespace Myriad.IO;

/// <summary>
/// Synchronous reads and writes for the <see cref="System.IO.Stream"/> view (<see cref="JobTcpStream"/>)
/// on the driver's path: the calling thread blocks in the kernel (<c>poll</c>) until the socket is ready,
/// as <c>NetworkStream.Read</c> does.
/// </summary>
/// <remarks>
/// <para>Why not wait for the asynchronous operation: a worker blocked in a synchronous wait polls the
/// driver only between its 1 ms sleeps (<c>Worker.IdleUntilWoken</c>), and on a one-worker runtime, or
/// while the other workers sleep on their parkers, nobody else fetches the event: a job reading lines
/// with <c>StreamReader.ReadLine</c> would pay up to a millisecond a read. Blocking in the kernel
/// wakes at once.</para>
/// <para>Disposal: the blocked <c>poll</c> holds a reference to the socket handle, so closing it makes
/// .NET disconnect the socket to unblock the call; the loop then sees the registration's abort reason
/// and throws <see cref="ObjectDisposedException"/>. A <c>poll</c> that starts after the close throws
/// the <see cref="Socket"/>'s own exception instead, naming <c>System.Net.Sockets.Socket</c>: it is
/// replaced by the abort reason, which names the connection (<see cref="WaitFor"/>; the receive and
/// the send do the same, see <see cref="SocketAttempt"/>). The runtime's disposal aborts the
/// registration without closing the socket: the blocked thread sees it when its <c>poll</c> slice ends
/// (<see cref="MyriadDefaults.BlockingIoRecheckMilliseconds"/>), returns, and the loop's abort check throws the
/// reason.</para>
/// </remarks>
public sealed partial class JobTcpConnection
{
    /// <summary>Reads at least one byte (0 at the end of the stream) into <paramref name="buffer"/>, blocking.</summary>
    /// <exception cref="InvalidOperationException">Another read is pending.</exception>
    internal int ReadBlocking(Span<byte> buffer)
    {
        IoRegistration registration = _registration!;
        if (Interlocked.Exchange(ref _readBusy, 1) != 0)
        {
            throw new InvalidOperationException("A read is already pending on this connection; await it before starting another.");
        }

        try
        {
            while (true)
            {
                ThrowIfAborted(registration);
                switch (SocketAttempt.Receive(Socket, buffer, registration, out int received, out Exception? failure))
                {
                    case AttemptOutcome.Done:
                        return received;
                    case AttemptOutcome.Failed:
                        ExceptionDispatchInfo.Throw(failure!);
                        break;
                }

                WaitFor(registration, SelectMode.SelectRead);
            }
        }
        finally
        {
            EndRead();
        }
    }

    /// <summary>Writes all of <paramref name="buffer"/>, blocking while the socket's send buffer is full.</summary>
    /// <exception cref="InvalidOperationException">Another write is pending.</exception>
    internal void WriteBlocking(ReadOnlySpan<byte> buffer)
    {
        IoRegistration registration = _registration!;
        if (Interlocked.Exchange(ref _writeBusy, 1) != 0)
        {
            throw new InvalidOperationException("A write is already pending on this connection; await it before starting another.");
        }

        try
        {
            while (true)
            {
                ThrowIfAborted(registration);
                AttemptOutcome outcome = SocketAttempt.Send(Socket, buffer, registration, CancellationToken.None, out int sent, out Exception? failure);
                buffer = buffer[sent..];
                switch (outcome)
                {
                    case AttemptOutcome.Done:
                        return;
                    case AttemptOutcome.Failed:
                        ExceptionDispatchInfo.Throw(failure!);
                        break;
                }

                WaitFor(registration, SelectMode.SelectWrite);
            }
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>
    /// Blocks until the socket is ready for <paramref name="mode"/>, closed, or its registration aborted
    /// (the runtime's disposal, noticed within <see cref="MyriadDefaults.BlockingIoRecheckMilliseconds"/>);
    /// the caller's loop then throws the abort reason at its next check.
    /// </summary>
    private void WaitFor(IoRegistration registration, SelectMode mode)
    {
        int sliceMicroseconds = MyriadDefaults.BlockingIoRecheckMilliseconds * 1000;
        try
        {
            // The runtime's disposal aborts the registration but leaves the socket open (its owner
            // closes it), so the poll would not return: look at the abort between slices.
            while (!Socket.Poll(sliceMicroseconds, mode) && !registration.IsAborted)
            {
            }
        }
        catch (ObjectDisposedException disposed)
        {
            // Disposed since this loop's abort check: Dispose aborts the registration first.
            ExceptionDispatchInfo.Throw(registration.Blame(disposed));
        }
    }

    private static void ThrowIfAborted(IoRegistration registration)
    {
        if (registration.AbortError() is { } reason)
        {
            ExceptionDispatchInfo.Throw(reason);
        }
    }
}
