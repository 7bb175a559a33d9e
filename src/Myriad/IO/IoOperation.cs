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
    private IoRegistration? _registration;
    private bool _write;

    /// <summary>The protocol's Park steps 3 to 5, after a first attempt (made after reading <paramref name="seq"/>) would block.</summary>
    internal Job<T> Park(IoRegistration registration, bool write, int seq, CancellationToken cancellationToken)
    {
        _registration = registration;
        _write = write;
        short token = Version;
        registration.Park(write, this, seq);
        if (cancellationToken.CanBeCanceled)
        {
            // After parking: a callback that ran earlier would find nothing to take back. A callback
            // racing the completion loses the take-back and does nothing; the registration is
            // dropped best-effort once completed (the instance is never reused, see the remarks).
            _cancellation = cancellationToken.UnsafeRegister(static (s, t) => ((IoOperation<T>)s!).Cancel(t), this);
            if (IsCompletedUnchecked)
            {
                _cancellation.Unregister();
            }
        }

        return new Job<T>(this, token);
    }

    public bool TryAttempt()
    {
        if (_registration!.AbortReason is { } reason)
        {
            Fail(reason);
            return true;
        }

        try
        {
            return TryAttemptCore();
        }
        catch (ObjectDisposedException error)
        {
            Fail(error);
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

    private void Cancel(CancellationToken token)
    {
        if (_registration!.TryTakeBack(_write, this))
        {
            Fail(ThrowHelper.Canceled(token));
        }
    }

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
}

/// <summary>A send waiting for room; completes when every byte was sent.</summary>
internal sealed class WriteOperation(JobTcpConnection connection) : IoOperation<VoidResult>
{
    private ReadOnlyMemory<byte> _buffer;

    internal void Prepare(ReadOnlyMemory<byte> remaining) => _buffer = remaining;

    private protected override bool TryAttemptCore()
    {
        AttemptOutcome outcome = SocketAttempt.Send(connection.Socket, _buffer.Span, Registration, out int sent, out Exception? failure);
        _buffer = _buffer.Slice(sent);
        return Settle(outcome, default, failure);
    }

    private protected override void Clear() => _buffer = default;

    private protected override void OnReleased() => connection.EndWrite();
}
