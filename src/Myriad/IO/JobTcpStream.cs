using System;
using System.IO;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace Myriad.IO;

/// <summary>
/// The <see cref="Stream"/> view of a <see cref="JobTcpConnection"/> (<see cref="JobTcpConnection.AsStream"/>):
/// asynchronous reads and writes are the connection's jobs seen as <see cref="ValueTask"/>s, without
/// allocation; synchronous ones block the calling thread (in the kernel on the driver's path, see
/// JobTcpConnection.Blocking.cs; by waiting for the job on the BCL path). A socket failure surfaces
/// as an <see cref="IOException"/> around the <see cref="SocketException"/>, as a
/// <see cref="System.Net.Sockets.NetworkStream"/>'s does; disposal and cancellation as they are.
/// </summary>
internal sealed class JobTcpStream(JobTcpConnection connection, bool ownsConnection) : Stream
{
    // Set by Dispose: the view stops working (as NetworkStream does), also when it does not own the
    // connection, which then stays usable through the connection itself.
    private volatile bool _disposed;

    public override bool CanRead => !_disposed;

    public override bool CanWrite => !_disposed;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        Job<int> read = connection.ReadAsync(buffer, cancellationToken);
        if (read.IsCompletedSuccessfully)
        {
            return new ValueTask<int>(read.GetAwaiter().GetResult());
        }

        // The wrapper is a job (a job's await of it resumes on its runtime with no extra hop); it
        // runs only when the read did not complete successfully at once.
        return ReadOrWrap(read).AsValueTask();

        static async Job<int> ReadOrWrap(Job<int> read)
        {
            try
            {
                return await read;
            }
            catch (SocketException e)
            {
                throw ReadFailed(e);
            }
        }
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        Job write = connection.WriteAsync(buffer, cancellationToken);
        if (write.IsCompletedSuccessfully)
        {
            write.GetAwaiter().GetResult(); // consumes it
            return default;
        }

        return WriteOrWrap(write).AsValueTask();

        static async Job WriteOrWrap(Job write)
        {
            try
            {
                await write;
            }
            catch (SocketException e)
            {
                throw WriteFailed(e);
            }
        }
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    public override int Read(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        return Read(buffer.AsSpan(offset, count));
    }

    public override int Read(Span<byte> buffer)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        try
        {
            return ReadCore(buffer);
        }
        catch (SocketException e)
        {
            throw ReadFailed(e);
        }
    }

    private int ReadCore(Span<byte> buffer)
    {
        if (connection.UsesIoDriver)
        {
            // Not a wait for the job: a worker blocked in a wait polls the driver only between
            // short sleeps (see JobTcpConnection.Blocking.cs).
            return connection.ReadBlocking(buffer);
        }

        // The span cannot outlive this call, so the wait happens on a pooled array.
        byte[] rented = System.Buffers.ArrayPool<byte>.Shared.Rent(buffer.Length);
        try
        {
            int read = connection.ReadAsync(rented.AsMemory(0, buffer.Length)).Wait();
            rented.AsSpan(0, read).CopyTo(buffer);
            return read;
        }
        finally
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(rented);
        }
    }

    public override void Write(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        Write(buffer.AsSpan(offset, count));
    }

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        try
        {
            WriteCore(buffer);
        }
        catch (SocketException e)
        {
            throw WriteFailed(e);
        }
    }

    private void WriteCore(ReadOnlySpan<byte> buffer)
    {
        if (connection.UsesIoDriver)
        {
            connection.WriteBlocking(buffer);
            return;
        }

        byte[] rented = System.Buffers.ArrayPool<byte>.Shared.Rent(buffer.Length);
        try
        {
            buffer.CopyTo(rented);
            connection.WriteAsync(rented.AsMemory(0, buffer.Length)).Wait();
        }
        finally
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(rented);
        }
    }

    // As NetworkStream reports a socket's failure: an IOException around the SocketException, so
    // that code written against streams (StreamReader, a protocol's own loop) catches it as I/O.
    private static IOException ReadFailed(SocketException e) => new($"Unable to read data from the transport connection: {e.Message}.", e);

    private static IOException WriteFailed(SocketException e) => new($"Unable to write data to the transport connection: {e.Message}.", e);

    public override void Flush()
    {
    }

    public override Task FlushAsync(CancellationToken cancellationToken) =>
        cancellationToken.IsCancellationRequested ? Task.FromCanceled(cancellationToken) : Task.CompletedTask;

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        _disposed = true;
        if (disposing && ownsConnection)
        {
            connection.Dispose();
        }

        base.Dispose(disposing);
    }
}
