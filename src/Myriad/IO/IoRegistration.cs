using System;
using System.Threading;

namespace Myriad.IO;

/// <summary>An operation parked on a socket until it is ready: a read, a write, an accept or a connect.</summary>
internal interface IIoWaiter
{
    /// <summary>
    /// Performs the operation's system call once. Returns false when the socket would block (the
    /// operation stays pending); otherwise completes the operation (with its result or its error)
    /// and returns true.
    /// </summary>
    bool TryAttempt();

    /// <summary>Completes the pending operation with <paramref name="error"/> (disposal, driver shutdown, cancellation).</summary>
    void Fail(Exception error);

    /// <summary>
    /// Whether the operation's cancellation was requested (step C1): an owner that parks it reads
    /// this at step 4 and takes it back, and its next attempt then ends it as canceled.
    /// </summary>
    bool IsCancelRequested { get; }
}

/// <summary>
/// One socket's entry in an <see cref="IoDriver"/>: per direction, a readiness sequence number and
/// the one operation waiting for readiness.
/// </summary>
/// <remarks>
/// <para>The socket is registered once, edge-triggered, for reading and writing. Edge-triggered
/// epoll reports a transition only: after an operation saw "would block", the next event for that
/// direction is guaranteed to come, but only once. The protocol below makes sure that one event is
/// never missed by an operation that is about to park.</para>
/// <para><b>Park (the operation's thread, <see cref="AttemptOrPark"/>).</b>
/// 1. Read the direction's sequence number <c>s</c>.
/// 2. Attempt the system call (<see cref="IIoWaiter.TryAttempt"/>, which first ends the operation if
///    the socket was aborted or its cancellation requested); if it did not block, the operation is
///    complete: stop.
/// 3. Publish the operation in the waiter slot (interlocked exchange: a full fence).
/// 4. Re-read the sequence number and the operation's cancellation request. Sequence unchanged and no
///    request: the driver will see the waiter at the next event, a canceller at C2; stop.
/// 5. Changed, or cancellation requested: an event arrived since step 1, possibly before step 3 (the
///    driver then found the slot empty), or a canceller ran C2 before step 3 (it then found the slot
///    empty). Take the operation back (compare-exchange); if that fails, the driver, a canceller or
///    a disposer already took it and owns it now: stop. Otherwise go to step 1.</para>
/// <para><b>Event (the polling worker, <see cref="OnReady"/>).</b>
/// 1. Increment the sequence number (interlocked: a full fence).
/// 2. Exchange the waiter slot with null; if it held an operation, this thread owns it and runs the
///    park protocol for it (an event may be spurious, edge-triggered readiness can be stale).</para>
/// <para><b>Cancel (the token's callback, <c>IoOperation.Cancel</c>).</b>
/// C1. Record the request in the operation (interlocked: a full fence).
/// C2. Take the operation back from its slot (<see cref="TryTakeBack"/>, compare-exchange). If that
///     succeeds, this thread owns it and ends it as canceled. If it fails, the operation is complete,
///     or another thread owns it (the poller retrying it, its own thread between steps 3 and 5, a
///     disposer): that owner reads the request at its next step 2 or step 4.</para>
/// <para>Why no event is lost: the operation writes the slot then reads the sequence; the driver writes
/// the sequence then reads the slot. With full fences on both sides, either the driver sees the
/// waiter or the operation sees the new sequence number and retries. Why no cancellation is lost,
/// the same way: the canceller writes the request then reads the slot; an owner that parks writes
/// the slot then reads the request. Either the canceller finds the operation in the slot, or the
/// owner sees the request, takes the operation back and ends it at its next attempt (a cancellation
/// that comes while an attempt is in flight is therefore honoured when that attempt would block,
/// instead of being parked again and forgotten). Only one thread ever owns a parked operation,
/// because it leaves the slot only through an exchange or a successful compare-exchange. Disposal
/// (<see cref="Abort"/>) is an event that fails the waiter instead.</para>
/// </remarks>
internal sealed class IoRegistration
{
    private int _readSeq;
    private int _writeSeq;
    private IIoWaiter? _reader;
    private IIoWaiter? _writer;
    private IoAbortCause? _abort;

    internal IoRegistration(IoDriver driver, int fd)
    {
        Driver = driver;
        Fd = fd;
    }

    internal IoDriver Driver { get; }

    internal int Fd { get; }

    /// <summary>The token the driver put in the epoll data of this socket (slot and generation).</summary>
    internal ulong Token;

    /// <summary>
    /// Null until <see cref="Abort"/>; then a new exception saying why, on each call: every operation
    /// that fails for the abort throws an instance of its own, as <see cref="System.Net.Sockets.Socket"/>'s
    /// do (a shared one would gather every rethrow's stack frames, and concurrent throws would write
    /// to it at once). Costs one volatile read while the socket is open.
    /// </summary>
    internal Exception? AbortError() => Volatile.Read(ref _abort)?.Create();

    /// <summary>Whether the socket was aborted (disposed, or its runtime disposed): <see cref="AbortError"/> without building the exception.</summary>
    internal bool IsAborted => Volatile.Read(ref _abort) is not null;

    /// <summary>
    /// What a failed system call on this socket reports: <paramref name="error"/>, unless the socket was
    /// aborted (disposed) meanwhile. Closing a socket while a call is using it makes .NET disconnect it
    /// to unblock the call, which then fails with ECONNABORTED, EPIPE or EINVAL (or reads an end) that
    /// only the disposal caused; such a call reports the abort instead.
    /// </summary>
    internal Exception Blame(Exception error) => AbortError() ?? error;

    /// <summary>Step 1 of Park for the caller's fast path, which makes its first attempt itself.</summary>
    internal int ReadSequence(bool write) => Volatile.Read(ref write ? ref _writeSeq : ref _readSeq);

    /// <summary>
    /// Steps 3 to 5 of Park for an operation whose first attempt (made after reading <paramref name="seq"/>)
    /// would block. Returns when the operation is complete or owned by the slot.
    /// </summary>
    internal void Park(bool write, IIoWaiter op, int seq)
    {
        ref int sequence = ref write ? ref _writeSeq : ref _readSeq;
        ref IIoWaiter? slot = ref write ? ref _writer : ref _reader;
        if (!Publish(ref sequence, ref slot, op, seq))
        {
            AttemptOrPark(ref sequence, ref slot, op);
        }
    }

    /// <summary>The event protocol for one direction.</summary>
    internal void OnReady(bool write)
    {
        ref int sequence = ref write ? ref _writeSeq : ref _readSeq;
        ref IIoWaiter? slot = ref write ? ref _writer : ref _reader;
        Interlocked.Increment(ref sequence);
        IIoWaiter? op = Interlocked.Exchange(ref slot, null);
        if (op is not null)
        {
            AttemptOrPark(ref sequence, ref slot, op);
        }
    }

    /// <summary>
    /// Step C2: takes a parked operation back out of its slot (cancellation); false when it is not
    /// there (the driver, a disposer or its own parking thread holds it, and ends it after reading
    /// the request recorded at C1; or it is complete).
    /// </summary>
    internal bool TryTakeBack(bool write, IIoWaiter op)
    {
        ref IIoWaiter? slot = ref write ? ref _writer : ref _reader;
        return ReferenceEquals(Interlocked.CompareExchange(ref slot, null, op), op);
    }

    /// <summary>
    /// Fails both directions' waiters, and every later operation, for <paramref name="cause"/> (socket
    /// disposal, driver shutdown; the first cause stays). An event for both directions as far as
    /// parking goes: an operation between its steps 3 and 5 sees the new sequence, takes itself back
    /// and fails at its next attempt, which checks <see cref="AbortError"/> first.
    /// </summary>
    internal void Abort(IoAbortCause cause)
    {
        Interlocked.CompareExchange(ref _abort, cause, null);
        Interlocked.Increment(ref _readSeq);
        Interlocked.Increment(ref _writeSeq);
        Interlocked.Exchange(ref _reader, null)?.Fail(_abort!.Create());
        Interlocked.Exchange(ref _writer, null)?.Fail(_abort!.Create());
    }

    private static void AttemptOrPark(ref int sequence, ref IIoWaiter? slot, IIoWaiter op)
    {
        while (true)
        {
            int seq = Volatile.Read(ref sequence);
            if (op.TryAttempt() || Publish(ref sequence, ref slot, op, seq))
            {
                return;
            }
        }
    }

    /// <summary>Steps 3 to 5; false when the operation was taken back and must be attempted again.</summary>
    private static bool Publish(ref int sequence, ref IIoWaiter? slot, IIoWaiter op, int seq)
    {
        // Step 3.
        IIoWaiter? previous = Interlocked.Exchange(ref slot, op);
        if (previous is not null && !ReferenceEquals(previous, op))
        {
            // The connection refuses a second concurrent operation per direction before it gets
            // here, so this is a bug, not a user error: fail loudly rather than lose one.
            throw new InvalidOperationException("Two operations waited on the same socket direction.");
        }

        // Step 4 (both reads after the exchange's fence).
        if (Volatile.Read(ref sequence) == seq && !op.IsCancelRequested)
        {
            return true;
        }

        // Step 5.
        return !ReferenceEquals(Interlocked.CompareExchange(ref slot, null, op), op);
    }
}

/// <summary>
/// Why a registration was aborted: the information of the <see cref="ObjectDisposedException"/> that
/// each operation failing for it gets, as a new instance (<see cref="IoRegistration.AbortError"/>).
/// </summary>
internal sealed class IoAbortCause
{
    /// <summary>The connection was disposed.</summary>
    internal static readonly IoAbortCause ConnectionDisposed = new("JobTcpConnection", message: null);

    /// <summary>The listener was disposed.</summary>
    internal static readonly IoAbortCause ListenerDisposed = new("JobTcpListener", message: null);

    /// <summary>The runtime, and with it the driver, was disposed.</summary>
    internal static readonly IoAbortCause RuntimeDisposed = new("MultiThreadRuntime", "The runtime that drives this socket's I/O was disposed.");

    private readonly string _objectName;
    private readonly string? _message;

    private IoAbortCause(string objectName, string? message)
    {
        _objectName = objectName;
        _message = message;
    }

    /// <summary>A new exception for one failing operation.</summary>
    internal ObjectDisposedException Create() => _message is null ? new(_objectName) : new(_objectName, _message);
}
