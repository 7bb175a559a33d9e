using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace Myriad.IO;

/// <summary>
/// A non-blocking connect waiting for the handshake. Each attempt calls <c>connect</c> again on the
/// same socket: EALREADY means still in progress, EISCONN done, anything else the connect's error.
/// </summary>
internal sealed class ConnectOperation(JobTcpConnection connection, SocketAddress address) : IoOperation<JobTcpConnection>
{
    internal override string Describe() => "JobTcpConnection.ConnectAsync: waits for the handshake";

    private const int EALREADY = 114;
    private const int EISCONN = 106;

    private protected override unsafe bool TryAttemptCore()
    {
        int result;
        fixed (byte* raw = address.Buffer.Span)
        {
            result = LinuxNative.Connect((int)connection.Socket.Handle, raw, address.Size);
        }

        int errno = result == 0 ? 0 : Marshal.GetLastPInvokeError();
        switch (errno)
        {
            case 0:
            case EISCONN:
                Succeed(connection);
                return true;
            case EALREADY:
            case LinuxNative.EINPROGRESS:
            case LinuxNative.EINTR:
                return false;
            default:
                Fail(new SocketException(ToSocketError(errno)));
                return true;
        }
    }

    private protected override void OnFailed() => connection.Dispose();

    private protected override void Clear()
    {
    }

    private protected override void OnReleased()
    {
    }

    /// <summary>The BCL's name for a connect errno (Linux numbering).</summary>
    internal static int ToSocketError(int errno) => (int)(errno switch
    {
        111 => SocketError.ConnectionRefused,
        110 => SocketError.TimedOut,
        101 => SocketError.NetworkUnreachable,
        113 => SocketError.HostUnreachable,
        99 => SocketError.AddressNotAvailable,
        LinuxNative.EMFILE or LinuxNative.ENFILE => SocketError.TooManyOpenSockets,
        _ => SocketError.SocketError,
    });
}
