using System;
using System.Threading;
using Myriad.IO;
using Xunit;

namespace Myriad.Tests.IO;

/// <summary>
/// The cancellation half of the parking protocol (IoRegistration.cs), driven step by step with an
/// operation whose system call can be held open: a cancellation that arrives while the operation is
/// out of its slot, being attempted by the poller (or by its own thread's step-5 retry), must not be
/// lost when the attempt would block and the operation parks again.
/// </summary>
public sealed class IoCancellationProtocolTests
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Cancel_WhileThePollerRetriesTheOperation_EndsItWhenItParksAgain(bool write)
    {
        var registration = new IoRegistration(null!, -1);
        var op = new GatedOperation();
        using var cts = new CancellationTokenSource();
        Job<int> job = op.Park(registration, write, registration.ReadSequence(write), cts.Token);
        Assert.False(job.IsCompleted);

        // An event: the poller takes the operation out of its slot and retries the system call,
        // which is held open while the cancellation comes.
        op.HoldNextAttempt();
        var poller = new Thread(() => registration.OnReady(write));
        poller.Start();
        Assert.True(op.InAttempt.Wait(TimeSpan.FromSeconds(10)));
        cts.Cancel();
        op.LetAttemptReturn(); // "would block": the poller parks it again
        Assert.True(poller.Join(TimeSpan.FromSeconds(10)));

        Assert.True(job.IsCompleted, "the cancellation was lost: the operation parked again and waits for good");
        OperationCanceledException canceled = Assert.ThrowsAny<OperationCanceledException>(() => job.Wait());
        Assert.Equal(cts.Token, canceled.CancellationToken);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Cancel_DuringTheParkingThreadsOwnRetry_EndsTheOperation(bool write)
    {
        var registration = new IoRegistration(null!, -1);
        var op = new GatedOperation();
        using var cts = new CancellationTokenSource();

        // A sequence number older than the current one: parking sees "an event came since the first
        // attempt", takes the operation back and retries it on the parking thread (step 5).
        op.HoldNextAttempt();
        Job<int> job = default;
        var parking = new Thread(() => job = op.Park(registration, write, registration.ReadSequence(write) - 1, cts.Token));
        parking.Start();
        Assert.True(op.InAttempt.Wait(TimeSpan.FromSeconds(10)));
        cts.Cancel();
        op.LetAttemptReturn();
        Assert.True(parking.Join(TimeSpan.FromSeconds(10)));

        Assert.True(job.IsCompleted, "the cancellation was lost");
        Assert.ThrowsAny<OperationCanceledException>(() => job.Wait());
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Cancel_WhileParked_TakesTheOperationBackAndTheSlotStaysFree(bool write)
    {
        var registration = new IoRegistration(null!, -1);
        var op = new GatedOperation();
        using var cts = new CancellationTokenSource();
        Job<int> job = op.Park(registration, write, registration.ReadSequence(write), cts.Token);
        cts.Cancel();
        Assert.ThrowsAny<OperationCanceledException>(() => job.Wait());

        // The slot is empty: a later event attempts nothing.
        int attempts = op.Attempts;
        registration.OnReady(write);
        Assert.Equal(attempts, op.Attempts);
    }

    [Fact]
    public void Cancel_AlreadyRequestedWhenParking_EndsTheOperationWithoutAnEvent()
    {
        var registration = new IoRegistration(null!, -1);
        var op = new GatedOperation();
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        Job<int> job = op.Park(registration, write: false, registration.ReadSequence(write: false), cts.Token);
        Assert.True(job.IsCompleted);
        Assert.ThrowsAny<OperationCanceledException>(() => job.Wait());
    }

    /// <summary>An operation whose system call always would block, and can be held open on demand.</summary>
    private sealed class GatedOperation : IoOperation<int>
    {
        internal readonly ManualResetEventSlim InAttempt = new();
        private readonly ManualResetEventSlim _release = new();
        private volatile bool _hold;
        private int _attempts;

        internal int Attempts => Volatile.Read(ref _attempts);

        internal void HoldNextAttempt()
        {
            InAttempt.Reset();
            _release.Reset();
            _hold = true;
        }

        internal void LetAttemptReturn() => _release.Set();

        private protected override bool TryAttemptCore()
        {
            Interlocked.Increment(ref _attempts);
            if (_hold)
            {
                _hold = false;
                InAttempt.Set();
                _release.Wait();
            }

            return false;
        }

        private protected override void Clear()
        {
        }

        private protected override void OnReleased()
        {
        }
    }
}
