using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.ExceptionServices;
using System.Threading;
using Myriad.Scheduling;

namespace Myriad.IO;

public sealed partial class JobTcpConnection
{
    /// <summary>
    /// Connects to <paramref name="host"/> on <paramref name="port"/>, as
    /// <see cref="TcpClient.ConnectAsync(string, int)"/> does: resolves the name, then tries its
    /// addresses in the order the resolver gave them until one accepts (<c>localhost</c> may give
    /// <c>::1</c> before <c>127.0.0.1</c>). Driven by the current thread's runtime when that is a
    /// <see cref="MultiThreadRuntime"/> on Linux.
    /// </summary>
    /// <param name="host">A host name or an IP address literal.</param>
    /// <param name="port">The port, 0 to 65535.</param>
    /// <param name="cancellationToken">Stops the resolution or the connection attempt with <see cref="OperationCanceledException"/>.</param>
    /// <exception cref="ArgumentNullException"><paramref name="host"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="host"/> is empty.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="port"/> is outside 0 to 65535.</exception>
    /// <remarks>The job fails with the resolver's <see cref="SocketException"/> when the name does not
    /// resolve, and with the last address's when none accepts.</remarks>
    public static Job<JobTcpConnection> ConnectAsync(string host, int port, CancellationToken cancellationToken = default) =>
        ConnectAsync(host, port, JobRuntime.Current, cancellationToken);

    /// <summary>
    /// Connects to <paramref name="host"/> on <paramref name="port"/> (see
    /// <see cref="ConnectAsync(string, int, CancellationToken)"/>); its I/O is driven by
    /// <paramref name="runtime"/> as in <see cref="ConnectAsync(IPEndPoint, JobRuntime?, CancellationToken)"/>.
    /// </summary>
    /// <inheritdoc cref="ConnectAsync(string, int, CancellationToken)"/>
    public static Job<JobTcpConnection> ConnectAsync(string host, int port, JobRuntime? runtime, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(host);
        ArgumentOutOfRangeException.ThrowIfLessThan(port, IPEndPoint.MinPort);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(port, IPEndPoint.MaxPort);
        return IPAddress.TryParse(host, out IPAddress? address)
            ? ConnectAsync(new IPEndPoint(address, port), runtime, cancellationToken)
            : ConnectToResolved(host, port, runtime, cancellationToken);
    }

    private static async Job<JobTcpConnection> ConnectToResolved(string host, int port, JobRuntime? runtime, CancellationToken cancellationToken)
    {
        IPAddress[] addresses = await Dns.GetHostAddressesAsync(host, cancellationToken);
        if (addresses.Length == 0)
        {
            throw new SocketException((int)SocketError.HostNotFound);
        }

        SocketException? last = null;
        foreach (IPAddress address in addresses)
        {
            try
            {
                return await ConnectAsync(new IPEndPoint(address, port), runtime, cancellationToken);
            }
            catch (SocketException refused)
            {
                last = refused; // the next address may accept
            }
        }

        ExceptionDispatchInfo.Throw(last!);
        return null!; // not reached
    }
}
