using System;
using Myriad.Internal;
using System.Threading;
using Myriad.Jobs;

namespace Myriad.IO;

/// <summary>
/// The completion cell of one socket operation that had to wait for readiness: the job handle
/// returned to the caller points at it, and the socket's <see cref="IoRegistration"/> slot holds it
/// until the driver (or a canceller, or disposal) completes it.
/// </summary>
/// <remarks>
/// <para><b>States.</b> Idle (between uses, for the connection's own pooled instance) -> Parked (in
/// the registration slot, or being attempted by the one thread that took it out) -> Completed (result
/// or error written, continuation dispatched) -> Idle again once the caller consumed the outcome
/// (<see cref="Release"/> bumps the version, so a stale handle fails loudly).</para>
/// <para><b>Pooled or cancelable, never both.</b> An operation without a cancelable token uses the
/// connection's one reusable instance per direction: no allocation in steady state. An operation
/// with a cancelable token gets a fresh instance: its cancellation callback may still run after the
/// operation completed, and must then find an instance that nobody reuses.</para>
/// </remarks>
internal abstract class IoOperation<T> : SourceBox<T>, IIoWaiter
{
    private CancellationTokenRegistration _cancellation;
    private CancellationToken _cancellationToken;
    private IoRegistration? _registration;
    private bool _write;
    private int _cancelRequested;

    /// <summary>
    /// The protocol's Park steps 3 to 5, after a first attempt (made after reading <paramref name="seq"/>)
    /// would block; with a cancelable token, the cancellation steps C1 and C2 (see
    /// <see cref="IoRegistration"/>) are set up first.
    /// </summary>
    internal Job<T> Park(IoRegistration registration, bool write, int seq, CancellationToken cancellationToken)
    {
        _registration = registration;
        _write = write;
        _cancellationToken = cancellationToken;
        _cancelRequested = 0;
        short token = Version;
        if (cancellationToken.CanBeCanceled)
        {
            // Before parking, so that the registration is in place before any other thread can own
            // the operation (and unregister it in Finish). A callback that runs before the operation
            // is in its slot (inline here, if the token is already canceled) records the request
            // (C1) and finds nothing to take back (C2); parking then sees the request at its step 4
            // and ends the operation. A callback racing the completion loses the take-back and does
            // nothing; the instance is never reused (see the remarks), so a late one is harmless.
            _cancellation = cancellationToken.UnsafeRegister(static s => ((IoOperation<T>)s!).Cancel(), this);
        }

        registration.Park(write, this, seq);
        return new Job<T>(this, token);
    }

    /// <summary>Whether a cancellation was requested (step C1 ran): read by parking at its step 4 and by every attempt.</summary>
    public bool IsCancelRequested => Volatile.Read(ref _cancelRequested) != 0;

    public bool TryAttempt()
    {
        if (_registration!.AbortError() is { } reason)
        {
            Fail(reason);
            return true;
        }

        if (IsCancelRequested)
        {
            // Whoever attempts owns the operation: a cancellation whose take-back (C2) lost the race
            // with this owner ends the operation here rather than letting it park again. The check
            // comes before the system call, so a request recorded by now is honoured even when the
            // socket is ready: only an attempt whose system call was already under way when the
            // request came can still complete the operation (and a write's, between two sends, is
            // cut short by SocketAttempt.Send's own check).
            Fail(ThrowHelper.Canceled(_cancellationToken));
            return true;
        }

        try
        {
            return TryAttemptCore();
        }
        catch (ObjectDisposedException error)
        {
            // The socket closed between the abort check above and the system call (a connect's
            // Socket.Handle, say): the owner's Dispose aborts the registration before it closes
            // the socket, so the abort reason, naming the connection or the listener, is there.
            Fail(_registration.Blame(error));
            return true;
        }
    }

    public void Fail(Exception error)
    {
        Finish();
        OnFailed();
        TrySetException(error);
    }

    /// <summary>Cleanup owed when the operation fails (a connect disposes its socket).</summary>
    private protected virtual void OnFailed()
    {
    }

    /// <summary>The system call; completes through <see cref="Succeed"/> or <see cref="Fail"/>, or returns false (would block).</summary>
    private protected abstract bool TryAttemptCore();

    /// <summary>Drops what the operation held (its buffer) once it completes.</summary>
    private protected abstract void Clear();

    /// <summary>After the outcome was consumed: the direction is free again.</summary>
    private protected abstract void OnReleased();

    private protected void Succeed(T result)
    {
        Finish();
        TrySetResult(result);
    }

    private protected override void Release()
    {
        ResetBox();
        OnReleased();
    }

    private void Finish()
    {
        Clear();
        _cancellation.Unregister();
    }

    /// <summary>The token's callback: steps C1 and C2 of the protocol (see <see cref="IoRegistration"/>).</summary>
    private void Cancel()
    {
        // C1. Record the request (interlocked: a full fence, before the slot is read in C2).
        Interlocked.Exchange(ref _cancelRequested, 1);

        // C2. Take the operation back. If it is not in its slot, it is complete, or another thread
        //     owns it (an attempt in flight, a parking thread between its steps 3 and 5, a disposer):
        //     that thread reads the request at its next attempt or at its step 4, and ends it.
        if (_registration!.TryTakeBack(_write, this))
        {
            Fail(ThrowHelper.Canceled(_cancellationToken));
        }
    }

    /// <summary>The token the operation was started with (default for a pooled one): an attempt checks it between sends.</summary>
    private protected CancellationToken CancellationToken => _cancellationToken;

    /// <summary>The registration of the socket this operation is parked on.</summary>
    private protected IoRegistration Registration => _registration!;

    /// <summary>Ends the operation as <paramref name="outcome"/> says; false (nothing done) for a retry.</summary>
    private protected bool Settle(AttemptOutcome outcome, T result, Exception? failure)
    {
        switch (outcome)
        {
            case AttemptOutcome.Done:
                Succeed(result);
                return true;
            case AttemptOutcome.Failed:
                Fail(failure!);
                return true;
            case AttemptOutcome.Canceled:
                Fail(ThrowHelper.Canceled(CancellationToken));
                return true;
            default:
                return false;
        }
    }
}

/// <summary>A receive waiting for data.</summary>
internal sealed class ReadOperation(JobTcpConnection connection) : IoOperation<int>
{
    private Memory<byte> _buffer;

    internal void Prepare(Memory<byte> buffer) => _buffer = buffer;

    private protected override bool TryAttemptCore()
    {
        AttemptOutcome outcome = SocketAttempt.Receive(connection.Socket, _buffer.Span, Registration, out int received, out Exception? failure);
        return Settle(outcome, received, failure);
    }

    private protected override void Clear() => _buffer = default;

    private protected override void OnReleased() => connection.EndRead();

    // The public operation, not this type's name (no endpoint: reading it races the disposal).
    internal override string Describe() => "JobTcpConnection.ReadAsync: waits for data";
}

/// <summary>A send waiting for room; completes when every byte was sent.</summary>
internal sealed class WriteOperation(JobTcpConnection connection) : IoOperation<VoidResult>
{
    private ReadOnlyMemory<byte> _buffer;

    internal void Prepare(ReadOnlyMemory<byte> remaining) => _buffer = remaining;

    private protected override bool TryAttemptCore()
    {
        AttemptOutcome outcome = SocketAttempt.Send(connection.Socket, _buffer.Span, Registration, CancellationToken, out int sent, out Exception? failure);
        _buffer = _buffer.Slice(sent);
        return Settle(outcome, default, failure);
    }

    private protected override void Clear() => _buffer = default;

    private protected override void OnReleased() => connection.EndWrite();

    internal override string Describe() => "JobTcpConnection.WriteAsync: waits for room to send";
}
