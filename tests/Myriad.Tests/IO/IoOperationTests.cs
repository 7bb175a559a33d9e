using System;
using System.Net.Sockets;
using Myriad.IO;
using Xunit;

namespace Myriad.Tests.IO;

/// <summary>
/// An operation's attempt (IoOperation.TryAttempt) racing its socket's disposal, driven step by step
/// with an operation whose system call plays the race.
/// </summary>
public sealed class IoOperationTests
{
    [Fact]
    public void TryAttempt_SocketClosedAfterTheAbortCheck_FailsWithTheConnectionsObjectDisposed()
    {
        var registration = new IoRegistration(null!, -1);
        var op = new ClosedUnderTheCallOperation(registration);
        Job<int> job = op.Park(registration, write: false, registration.ReadSequence(write: false), default);
        Assert.False(job.IsCompleted);

        // The poller retries the parked operation; its abort check passes, then the connection's
        // Dispose aborts the registration and closes the socket before the system call.
        registration.OnReady(write: false);

        Assert.True(job.IsCompleted);
        ObjectDisposedException disposed = Assert.Throws<ObjectDisposedException>(() => job.Wait());
        Assert.Equal(nameof(JobTcpConnection), disposed.ObjectName);
    }

    /// <summary>
    /// An operation whose system call finds its socket closed: the connection's <c>Dispose</c> (abort,
    /// then close) ran between the attempt's abort check and the call, which throws as
    /// <see cref="Socket"/>'s calls do on a closed socket.
    /// </summary>
    private sealed class ClosedUnderTheCallOperation(IoRegistration registration) : IoOperation<int>
    {
        private protected override bool TryAttemptCore()
        {
            registration.Abort(IoAbortCause.ConnectionDisposed);
            throw new ObjectDisposedException(typeof(Socket).FullName);
        }

        private protected override void Clear()
        {
        }

        private protected override void OnReleased()
        {
        }
    }
}
