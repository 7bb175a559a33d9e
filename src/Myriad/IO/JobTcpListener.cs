using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using Myriad.Scheduling;

namespace Myriad.IO;

/// <summary>
/// A TCP listener whose accepts are jobs. On Linux, in a <see cref="MultiThreadRuntime"/>, it and the
/// connections it accepts are driven by the runtime's I/O driver; elsewhere by BCL sockets (see
/// <see cref="JobTcpConnection"/> and docs/io.md).
/// </summary>
/// <remarks>
/// At most one accept may be pending at a time. When the process runs out of descriptors, an accept
/// fails with an <see cref="System.IO.IOException"/> naming the error (EMFILE) and the pending
/// connection stays in the backlog: the listener, and every connection already open, keep working,
/// and a later accept takes it once descriptors are free again.
/// </remarks>
public sealed class JobTcpListener : IDisposable
{
    private readonly Socket _socket;
    private readonly IoDriver? _driver;
    private readonly IoRegistration? _registration;
    private readonly IoRegistrationReleaser? _releaser;
    private int _acceptBusy;
    private int _disposed;

    private JobTcpListener(Socket socket, IoDriver? driver)
    {
        _socket = socket;
        _driver = driver;
        if (driver is not null)
        {
            socket.Blocking = false;
            _registration = driver.Register((int)socket.Handle);
            _releaser = new IoRegistrationReleaser(_registration, socket.SafeHandle, IoAbortCause.ListenerDisposed);
        }
    }

    /// <summary>The bound end point (with the port the system chose for port 0).</summary>
    public IPEndPoint LocalEndPoint => (IPEndPoint)_socket.LocalEndPoint!;

    /// <summary>Whether this listener is driven by the runtime's I/O driver (false: BCL asynchronous sockets).</summary>
    public bool UsesIoDriver => _registration is not null;

    /// <summary>Binds and listens, for the current thread's runtime (see <see cref="Bind(IPEndPoint, JobRuntime?, int)"/>).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="endPoint"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="backlog"/> is not positive.</exception>
    /// <exception cref="ObjectDisposedException">The runtime that would drive the listener was disposed (thrown at the call, as by <see cref="Socket"/>).</exception>
    /// <exception cref="SocketException">The socket could not be created, bound or put to listen: the
    /// address is in use (<see cref="SocketError.AddressAlreadyInUse"/>), or no descriptor is left for
    /// it or for the runtime's I/O driver, which the runtime's first socket creates
    /// (<see cref="SocketError.TooManyOpenSockets"/>).</exception>
    public static JobTcpListener Bind(IPEndPoint endPoint, int backlog = 512) => Bind(endPoint, JobRuntime.Current, backlog);

    /// <summary>
    /// Binds and listens. The listener and its connections are driven by <paramref name="runtime"/>'s
    /// I/O driver when that is a <see cref="MultiThreadRuntime"/> on Linux, by BCL sockets otherwise
    /// (null included).
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="endPoint"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="backlog"/> is not positive.</exception>
    /// <exception cref="ObjectDisposedException">The runtime that would drive the listener was disposed (thrown at the call, as by <see cref="Socket"/>).</exception>
    /// <exception cref="SocketException">The socket could not be created, bound or put to listen: the
    /// address is in use (<see cref="SocketError.AddressAlreadyInUse"/>), or no descriptor is left for
    /// it or for the runtime's I/O driver, which the runtime's first socket creates
    /// (<see cref="SocketError.TooManyOpenSockets"/>).</exception>
    public static JobTcpListener Bind(IPEndPoint endPoint, JobRuntime? runtime, int backlog = 512)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(backlog);
        IoDriver? driver = JobTcpConnection.DriverOf(runtime);
        var socket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            socket.Bind(endPoint);
            socket.Listen(backlog);
            return new JobTcpListener(socket, driver);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>Accepts the next connection.</summary>
    /// <exception cref="InvalidOperationException">Another accept is pending.</exception>
    public Job<JobTcpConnection> AcceptAsync(CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled<JobTcpConnection>(cancellationToken);
        }

        if (Interlocked.Exchange(ref _acceptBusy, 1) != 0)
        {
            throw new InvalidOperationException("An accept is already pending on this listener; await it before starting another.");
        }

        if (_registration is not { } registration)
        {
            return AcceptBcl(cancellationToken);
        }

        int seq = registration.ReadSequence(write: false);
        if (registration.AbortError() is { } reason)
        {
            EndAccept();
            return Job.FromException<JobTcpConnection>(reason);
        }

        if (TryAcceptNative(out JobTcpConnection? connection, out Exception? error))
        {
            EndAccept();
            return error is null ? new Job<JobTcpConnection>(connection!) : Job.FromException<JobTcpConnection>(error);
        }

        return new AcceptOperation(this).Park(registration, write: false, seq, cancellationToken);
    }

    /// <summary>Stops listening; a pending accept fails with <see cref="ObjectDisposedException"/>.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _releaser?.Release(); // see JobTcpConnection.Dispose
        _socket.Dispose();
    }

    internal void EndAccept() => Volatile.Write(ref _acceptBusy, 0);

    /// <summary>
    /// One <c>accept4</c> (non-blocking and close-on-exec in the same call). Returns false when no
    /// connection is waiting; otherwise the connection, or the error.
    /// </summary>
    internal unsafe bool TryAcceptNative(out JobTcpConnection? connection, out Exception? error)
    {
        connection = null;
        error = null;
        bool added = false;
        try
        {
            _socket.SafeHandle.DangerousAddRef(ref added);
            while (true)
            {
                int fd = LinuxNative.Accept4((int)_socket.SafeHandle.DangerousGetHandle(), null, null, LinuxNative.NonBlock | LinuxNative.CloExec);
                if (fd >= 0)
                {
                    var socket = new Socket(new SafeSocketHandle(fd, ownsHandle: true));
                    try
                    {
                        connection = new JobTcpConnection(socket, _driver);
                    }
                    catch (Exception failure)
                    {
                        socket.Dispose();
                        error = failure;
                    }

                    return true;
                }

                int errno = Marshal.GetLastPInvokeError();
                switch (errno)
                {
                    case LinuxNative.EAGAIN:
                        return false;
                    case LinuxNative.EINTR:
                    case LinuxNative.ECONNABORTED:
                        continue; // the peer gave up before we took it: take the next one
                    default:
                        // EINVAL when Dispose shut the socket down under this call: report the disposal.
                        error = _registration!.Blame(IoDriver.Failure("accept4", errno));
                        return true;
                }
            }
        }
        catch (ObjectDisposedException disposed)
        {
            // DangerousAddRef on a socket closed since the caller's abort check: Dispose aborts the
            // registration before it closes the socket, so report the listener's disposal, not the
            // SafeSocketHandle's.
            error = _registration!.Blame(disposed);
            return true;
        }
        finally
        {
            if (added)
            {
                _socket.SafeHandle.DangerousRelease();
            }
        }
    }

    private async Job<JobTcpConnection> AcceptBcl(CancellationToken cancellationToken)
    {
        try
        {
            Socket socket = await _socket.AcceptAsync(cancellationToken);
            return new JobTcpConnection(socket, null);
        }
        catch (Exception closed) when (closed is ObjectDisposedException or SocketException { SocketErrorCode: SocketError.OperationAborted }
            && Volatile.Read(ref _disposed) != 0)
        {
            // The BCL's report of a listener closed under a pending accept (OperationAborted), or of
            // an accept started after Dispose (naming its socket); this type promises an
            // ObjectDisposedException naming the listener on both paths.
            throw new ObjectDisposedException(nameof(JobTcpListener));
        }
        catch (SocketException failure) when (failure.SocketErrorCode is not SocketError.OperationAborted)
        {
            // The driver path reports a failed accept (EMFILE: out of descriptors) as an IOException
            // naming the error, as this type promises; the BCL's is a SocketException, which an
            // accept loop catching IOException would not survive.
            throw new IOException($"accept failed: {failure.Message} ({failure.SocketErrorCode}).", failure);
        }
        finally
        {
            EndAccept();
        }
    }
}

/// <summary>An accept waiting for a connection. One is allocated per accept that has to wait (a connection allocates anyway).</summary>
internal sealed class AcceptOperation(JobTcpListener listener) : IoOperation<JobTcpConnection>
{
    internal override string Describe() => "JobTcpListener.AcceptAsync: waits for a connection";

    private protected override bool TryAttemptCore()
    {
        if (!listener.TryAcceptNative(out JobTcpConnection? connection, out Exception? error))
        {
            return false;
        }

        if (error is not null)
        {
            Fail(error);
        }
        else
        {
            Succeed(connection!);
        }

        return true;
    }

    private protected override void Clear()
    {
    }

    private protected override void OnReleased() => listener.EndAccept();
}
