using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Jobs;
using Myriad.Scheduling;

namespace Myriad.IO;

/// <summary>
/// A TCP connection whose reads and writes are jobs. On Linux, in a <see cref="MultiThreadRuntime"/>,
/// the socket is driven by the runtime's own I/O driver (epoll, polled by the workers): a job woken
/// by I/O runs on the worker that polled, with no hand-off between threads. Elsewhere it falls back
/// to the BCL's asynchronous socket operations. See docs/io.md.
/// </summary>
/// <remarks>
/// <para>At most one read and one write may be pending at a time (a read and a write may overlap).
/// Consume each returned job (await it once): the connection reuses its operation state, and the next
/// operation in the same direction is refused with <see cref="InvalidOperationException"/> until the
/// previous one's outcome was consumed.</para>
/// <para>Steady state allocates nothing: an operation that completes at once returns a completed job,
/// and one that has to wait reuses the connection's operation cell, unless it was given a cancelable
/// token (a cancelable operation gets a cell of its own).</para>
/// <para>Failures: a reset by the peer or another socket error is a <see cref="SocketException"/>
/// (<see cref="SocketError.ConnectionReset"/>, ...); an operation pending or started when the
/// connection is disposed fails with <see cref="ObjectDisposedException"/>; cancellation ends with
/// <see cref="OperationCanceledException"/>.</para>
/// </remarks>
public sealed partial class JobTcpConnection : IDisposable
{
    private readonly IoRegistration? _registration;
    private readonly IoRegistrationReleaser? _releaser;
    private readonly ReadOperation? _read;
    private readonly WriteOperation? _write;
    private int _readBusy;
    private int _writeBusy;
    private int _disposed;

    internal JobTcpConnection(Socket socket, IoDriver? driver, IPEndPoint? connectedTo = null)
    {
        Socket = socket;
        _connectedTo = connectedTo;
        if (driver is not null)
        {
            socket.Blocking = false;
            _registration = driver.Register((int)socket.Handle);
            _releaser = new IoRegistrationReleaser(_registration, socket.SafeHandle, IoAbortCause.ConnectionDisposed);
            _read = new ReadOperation(this);
            _write = new WriteOperation(this);
        }
    }

    internal Socket Socket { get; }

    /// <summary>The hold on the driver registration (driver path only): tests play its finalizer.</summary>
    internal IoRegistrationReleaser? RegistrationReleaser => _releaser;

    /// <summary>Whether this connection is driven by the runtime's I/O driver (false: BCL asynchronous sockets).</summary>
    public bool UsesIoDriver => _registration is not null;

    /// <summary>
    /// The peer of a connection made through the I/O driver, which calls <c>connect</c> itself: the
    /// <see cref="Socket"/> object never learns that it connected, and reports no end points.
    /// </summary>
    private readonly IPEndPoint? _connectedTo;

    /// <summary>The local end point.</summary>
    public EndPoint? LocalEndPoint => Socket.LocalEndPoint ?? (_connectedTo is null ? null : BoundAddress());

    /// <summary>The remote end point.</summary>
    public EndPoint? RemoteEndPoint => Socket.RemoteEndPoint ?? _connectedTo;

    /// <summary>The address the kernel bound a driver-connected socket to (<c>getsockname</c>); null if it cannot tell.</summary>
    private unsafe EndPoint? BoundAddress()
    {
        AddressFamily family = _connectedTo!.AddressFamily;
        var address = new SocketAddress(family, SocketAddress.GetMaximumAddressSize(family));
        int size = address.Buffer.Length;
        int result;
        fixed (byte* raw = address.Buffer.Span)
        {
            result = LinuxNative.GetSockName((int)Socket.Handle, raw, &size);
        }

        if (result != 0)
        {
            return null;
        }

        address.Size = size;
        return _connectedTo.Create(address);
    }

    /// <summary>Whether Nagle's algorithm is disabled (<see cref="Socket.NoDelay"/>).</summary>
    public bool NoDelay
    {
        get => Socket.NoDelay;
        set => Socket.NoDelay = value;
    }

    /// <summary>
    /// What closing does with unsent data (<see cref="Socket.LingerState"/>): a
    /// <see cref="LingerOption"/> enabled with a zero timeout makes <see cref="Dispose"/> reset the
    /// connection (the peer sees a reset rather than the end of the stream).
    /// </summary>
    public LingerOption LingerState
    {
        get => Socket.LingerState!;
        set => Socket.LingerState = value;
    }

    /// <summary>The size of the kernel's receive buffer, in bytes (<see cref="Socket.ReceiveBufferSize"/>).</summary>
    public int ReceiveBufferSize
    {
        get => Socket.ReceiveBufferSize;
        set => Socket.ReceiveBufferSize = value;
    }

    /// <summary>The size of the kernel's send buffer, in bytes (<see cref="Socket.SendBufferSize"/>).</summary>
    public int SendBufferSize
    {
        get => Socket.SendBufferSize;
        set => Socket.SendBufferSize = value;
    }

    /// <summary>
    /// Connects to <paramref name="remote"/>, driven by the current thread's runtime when that is a
    /// <see cref="MultiThreadRuntime"/> on Linux.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="remote"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The runtime that would drive the connection was disposed (thrown at the call, as by <see cref="Socket"/>; a connection attempt that fails later faults the job).</exception>
    public static Job<JobTcpConnection> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default) =>
        ConnectAsync(remote, JobRuntime.Current, cancellationToken);

    /// <summary>
    /// Connects to <paramref name="remote"/>; its I/O is driven by <paramref name="runtime"/>'s driver
    /// when that is a <see cref="MultiThreadRuntime"/> on Linux, by BCL sockets otherwise (null included).
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="remote"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The runtime that would drive the connection was disposed (thrown at the call, as by <see cref="Socket"/>; a connection attempt that fails later faults the job).</exception>
    public static Job<JobTcpConnection> ConnectAsync(IPEndPoint remote, JobRuntime? runtime, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(remote);
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled<JobTcpConnection>(cancellationToken);
        }

        IoDriver? driver;
        Socket socket;
        try
        {
            driver = DriverOf(runtime); // the runtime's first socket creates its driver: two descriptors
            socket = new Socket(remote.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        }
        catch (SocketException noSocket)
        {
            // Out of descriptors, say: a faulted job, as every later failure of the attempt is.
            return Job.FromException<JobTcpConnection>(noSocket);
        }

        try
        {
            return driver is null ? ConnectBcl(socket, remote, cancellationToken) : ConnectNative(socket, remote, driver, cancellationToken);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Reads into <paramref name="buffer"/>; the job's result is the number of bytes read, 0 once the
    /// peer has closed its side. With an empty buffer it waits until data can be read and returns 0,
    /// leaving the data unread (a zero-byte read, as with <see cref="Socket"/>).
    /// </summary>
    /// <exception cref="InvalidOperationException">Another read is pending.</exception>
    public Job<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled<int>(cancellationToken);
        }

        if (Interlocked.Exchange(ref _readBusy, 1) != 0)
        {
            throw new InvalidOperationException("A read is already pending on this connection; await it before starting another.");
        }

        if (_registration is not { } registration)
        {
            return ReadBcl(buffer, cancellationToken);
        }

        int seq = registration.ReadSequence(write: false);
        if (registration.AbortError() is { } reason)
        {
            EndRead();
            return Job.FromException<int>(reason);
        }

        // A disposal racing this attempt is a failure naming the connection (see SocketAttempt).
        AttemptOutcome outcome = SocketAttempt.Receive(Socket, buffer.Span, registration, out int received, out Exception? failure);
        if (outcome != AttemptOutcome.WouldBlock)
        {
            EndRead();
            return outcome == AttemptOutcome.Done ? new Job<int>(received) : Job.FromException<int>(failure!);
        }

        ReadOperation op = cancellationToken.CanBeCanceled ? new ReadOperation(this) : _read!;
        op.Prepare(buffer);
        return op.Park(registration, write: false, seq, cancellationToken);
    }

    /// <summary>Writes all of <paramref name="buffer"/>; the job completes once every byte was handed to the kernel.</summary>
    /// <exception cref="InvalidOperationException">Another write is pending.</exception>
    public Job WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Job.FromCanceled(cancellationToken);
        }

        if (Interlocked.Exchange(ref _writeBusy, 1) != 0)
        {
            throw new InvalidOperationException("A write is already pending on this connection; await it before starting another.");
        }

        if (_registration is not { } registration)
        {
            return WriteBcl(buffer, cancellationToken);
        }

        int seq = registration.ReadSequence(write: true);
        if (registration.AbortError() is { } reason)
        {
            EndWrite();
            return Job.FromException(reason);
        }

        // A disposal racing this attempt is a failure naming the connection (see SocketAttempt).
        AttemptOutcome outcome = SocketAttempt.Send(Socket, buffer.Span, registration, cancellationToken, out int sent, out Exception? failure);
        if (outcome != AttemptOutcome.WouldBlock)
        {
            EndWrite();
            return outcome switch
            {
                AttemptOutcome.Done => Job.CompletedJob,
                AttemptOutcome.Canceled => Job.FromCanceled(cancellationToken),
                _ => Job.FromException(failure!),
            };
        }

        buffer = buffer.Slice(sent);
        WriteOperation op = cancellationToken.CanBeCanceled ? new WriteOperation(this) : _write!;
        op.Prepare(buffer);
        return Job.FromUntyped(op.Park(registration, write: true, seq, cancellationToken));
    }

    /// <summary>Half-close: tells the peer no more data will be sent (it reads 0); reading goes on.</summary>
    /// <exception cref="ObjectDisposedException">The connection was disposed.</exception>
    public void ShutdownWrite()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        Socket.Shutdown(SocketShutdown.Send);
    }

    /// <summary>
    /// A <see cref="Stream"/> over this connection, for <c>SslStream</c>, pipelines and other
    /// stream-based code. Its reads and writes report a socket's failure as an
    /// <see cref="IOException"/> around the <see cref="SocketException"/>, as <see cref="NetworkStream"/> does.
    /// </summary>
    /// <param name="ownsConnection">Whether disposing the stream disposes the connection (default true).</param>
    public Stream AsStream(bool ownsConnection = true) => new JobTcpStream(this, ownsConnection);

    /// <summary>
    /// Closes the connection. Pending and later operations fail with <see cref="ObjectDisposedException"/>.
    /// </summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        // Deregistered before the close, so that the descriptor number, once reused by the kernel,
        // cannot receive this socket's events. A connection dropped undisposed is deregistered by
        // the releaser's finalizer instead (its socket's finalizer closes the descriptor).
        _releaser?.Release();
        Socket.Dispose();
    }

    internal void EndRead() => Volatile.Write(ref _readBusy, 0);

    internal void EndWrite() => Volatile.Write(ref _writeBusy, 0);

    /// <summary>The driver to use for sockets created on behalf of <paramref name="runtime"/>, or null for the BCL path.</summary>
    internal static IoDriver? DriverOf(JobRuntime? runtime) =>
        runtime is MultiThreadRuntime multi && LinuxNative.IsSupported ? multi.GetOrCreateIoDriver() : null;

    private Job<int> ReadBcl(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        ValueTask<int> pending;
        try
        {
            pending = Socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);
        }
        catch (ObjectDisposedException)
        {
            // A faulted job, as on the driver's path, not an exception thrown at the call, and
            // naming the connection, not the BCL socket inside it.
            EndRead();
            return Job.FromException<int>(Disposed());
        }
        catch
        {
            EndRead();
            throw;
        }

        if (pending.IsCompletedSuccessfully)
        {
            EndRead();
            return new Job<int>(pending.Result);
        }

        return AwaitRead(pending);
    }

    private async Job<int> AwaitRead(ValueTask<int> pending)
    {
        try
        {
            return await pending;
        }
        catch (Exception error) when (IsFromDispose(error))
        {
            throw Disposed();
        }
        finally
        {
            EndRead();
        }
    }

    private Job WriteBcl(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        ValueTask<int> pending;
        try
        {
            pending = Socket.SendAsync(buffer, SocketFlags.None, cancellationToken);
        }
        catch (ObjectDisposedException)
        {
            EndWrite();
            return Job.FromException(Disposed());
        }
        catch
        {
            EndWrite();
            throw;
        }

        if (pending.IsCompletedSuccessfully && pending.Result == buffer.Length)
        {
            EndWrite();
            return Job.CompletedJob;
        }

        return AwaitWrite(pending, buffer, cancellationToken);
    }

    private async Job AwaitWrite(ValueTask<int> pending, ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                int sent = await pending;
                buffer = buffer.Slice(sent);
                if (buffer.IsEmpty)
                {
                    return;
                }

                pending = Socket.SendAsync(buffer, SocketFlags.None, cancellationToken);
            }
        }
        catch (Exception error) when (IsFromDispose(error))
        {
            throw Disposed();
        }
        finally
        {
            EndWrite();
        }
    }

    /// <summary>
    /// Whether a BCL operation failed because of <see cref="Dispose"/>: the BCL reports a socket closed
    /// under a pending operation as <see cref="SocketError.OperationAborted"/>, and one started on the
    /// closed socket (the next send of a partial write, say) as an <see cref="ObjectDisposedException"/>
    /// naming its <see cref="Socket"/>; this type promises an <see cref="ObjectDisposedException"/>
    /// naming the connection, on both paths (<see cref="Disposed"/>).
    /// </summary>
    private bool IsFromDispose(Exception error) =>
        error is ObjectDisposedException or SocketException { SocketErrorCode: SocketError.OperationAborted }
        && Volatile.Read(ref _disposed) != 0;

    private ObjectDisposedException Disposed() => new(nameof(JobTcpConnection));

    private static async Job<JobTcpConnection> ConnectBcl(Socket socket, IPEndPoint remote, CancellationToken cancellationToken)
    {
        try
        {
            await socket.ConnectAsync(remote, cancellationToken);
            return new JobTcpConnection(socket, null);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private static unsafe Job<JobTcpConnection> ConnectNative(Socket socket, IPEndPoint remote, IoDriver driver, CancellationToken cancellationToken)
    {
        socket.Blocking = false;
        SocketAddress address = remote.Serialize();
        int fd = (int)socket.Handle;
        int result;
        fixed (byte* raw = address.Buffer.Span)
        {
            result = LinuxNative.Connect(fd, raw, address.Size);
        }

        int errno = result == 0 ? 0 : Marshal.GetLastPInvokeError();
        if (errno != 0 && errno != LinuxNative.EINPROGRESS)
        {
            // A faulted job, as the BCL's ConnectAsync gives (an unreachable network, say), not an
            // exception thrown at the call.
            socket.Dispose();
            return Job.FromException<JobTcpConnection>(new SocketException(ConnectOperation.ToSocketError(errno)));
        }

        var connection = new JobTcpConnection(socket, driver, remote);
        if (errno == 0)
        {
            return new Job<JobTcpConnection>(connection);
        }

        // Registered after the call: epoll reports the socket writable once the handshake is over
        // (at once if it already is), never the "hung up" state of a socket not yet connecting.
        // The sequence number was not read before the first attempt (the socket was not registered
        // yet), so an impossible one is passed: parking then always takes the operation back and
        // retries it once under the regular protocol, and an event that came meanwhile is not lost.
        IoRegistration registration = connection._registration!;
        var op = new ConnectOperation(connection, address);
        return op.Park(registration, write: true, seq: registration.ReadSequence(write: true) - 1, cancellationToken);
    }
}
