using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace Myriad.IO;

/// <summary>
/// The <see cref="Stream"/> view of a <see cref="JobTcpConnection"/> (<see cref="JobTcpConnection.AsStream"/>):
/// asynchronous reads and writes are the connection's jobs seen as <see cref="ValueTask"/>s, without
/// allocation; synchronous ones block the calling thread (in the kernel on the driver's path, see
/// JobTcpConnection.Blocking.cs; by waiting for the job on the BCL path).
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
        return connection.ReadAsync(buffer, cancellationToken).AsValueTask();
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        return connection.WriteAsync(buffer, cancellationToken).AsValueTask();
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
