using System;
using System.Net.Sockets;
using System.Threading;

namespace Myriad.IO;

/// <summary>
/// A connection's or listener's hold on its socket's <see cref="IoRegistration"/>: released by the
/// owner's <c>Dispose</c>, or by this object's finalizer when the owner was dropped undisposed.
/// </summary>
/// <remarks>
/// <para><b>Why a separate object.</b> The driver's slot table roots every registration, so the
/// registration must not reference its owner (it does not: only a parked operation does, and a
/// socket with a parked operation is in use, not dropped). This object is referenced by the owner
/// alone, and becomes unreachable with it; its finalizer keeps the owner's graph out of the
/// finalization queue, and the BCL path, which has no registration, allocates none.</para>
/// <para><b>Descriptor reuse.</b> The socket's own finalizer may close the descriptor before this
/// one runs (the order of finalizers is not fixed), and the kernel may give the same number to a new
/// socket, registered under a new token. An <c>EPOLL_CTL_DEL</c> by number would then remove the new
/// socket from epoll, and its operations would wait for good. So the finalizer:
/// 1. Takes a reference on the socket's handle (<see cref="System.Runtime.InteropServices.SafeHandle.DangerousAddRef"/>).
///    If that fails, the handle's closed flag is set (its socket was disposed, or finalized). That
///    alone does not mean the descriptor is closed: a handle keeps it open while a call holds a
///    reference, and closes it when the last reference goes. On the finalizer's path no call can hold
///    one (the owner, and with it everything that could call on the socket, is unreachable), so the descriptor
///    is closed, which removed it from epoll (unless a forked child still holds a copy, see step 3),
///    and its number may be another file's: skip the removal.
/// 2. Otherwise the descriptor stays this socket's until step 4: remove it from epoll.
/// 3. Abort the registration and free its slot (a new generation): an event of the old socket still
///    queued, or still coming (a forked child may hold the descriptor a while, before its exec
///    closes it), carries the old token and is dropped by <see cref="IoDriver.Dispatch"/>.
/// 4. Release the reference (closing the descriptor if the socket was disposed meanwhile).
/// Nothing here ever names the descriptor after it may have been closed, and events reach a
/// registration by token, never by number: a new socket with a reused number never meets the old
/// registration.</para>
/// </remarks>
internal sealed class IoRegistrationReleaser
{
    private readonly IoRegistration _registration;
    private readonly SafeSocketHandle _handle;
    private readonly IoAbortCause _cause;
    private int _released;

    internal IoRegistrationReleaser(IoRegistration registration, SafeSocketHandle handle, IoAbortCause cause)
    {
        _registration = registration;
        _handle = handle;
        _cause = cause;
    }

    ~IoRegistrationReleaser() => ReleaseAbandoned();

    /// <summary>The owner's <c>Dispose</c>: deregisters while the socket is still open (the owner closes it after this returns).</summary>
    internal void Release()
    {
        if (Interlocked.Exchange(ref _released, 1) != 0)
        {
            return;
        }

        GC.SuppressFinalize(this);
        _registration.Driver.Deregister(_registration, _cause, removeFromEpoll: true);
    }

    /// <summary>The finalizer's steps 1 to 4 (see the remarks); internal for tests.</summary>
    internal void ReleaseAbandoned()
    {
        if (Interlocked.Exchange(ref _released, 1) != 0)
        {
            return;
        }

        bool added = false;
        try
        {
            try
            {
                _handle.DangerousAddRef(ref added); // step 1
            }
            catch (ObjectDisposedException)
            {
                // Closed flag set, and (on the finalizer's path, see step 1) the descriptor closed: the
                // kernel removed it from epoll, and the number may be another socket's.
            }

            _registration.Driver.Deregister(_registration, _cause, removeFromEpoll: added); // steps 2 and 3
        }
        finally
        {
            if (added)
            {
                _handle.DangerousRelease(); // step 4
            }
        }
    }
}
