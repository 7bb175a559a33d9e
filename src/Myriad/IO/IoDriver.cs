using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.InteropServices;
using System.Threading;
using Myriad.Internal;

namespace Myriad.IO;

/// <summary>
/// The Linux I/O driver of one <see cref="Scheduling.MultiThreadRuntime"/>: an epoll instance, an
/// eventfd to interrupt a blocked poll, and the table of registered sockets. See docs/io.md.
/// </summary>
/// <remarks>
/// <para><b>Who polls.</b> Only a worker of the runtime, and only one at a time: the poller is a
/// token taken with <see cref="TryAcquirePoller"/> (a worker that runs out of work and parks in the
/// driver instead of on its parker; a busy worker every <see cref="Scheduling.RuntimeOptions.IoPollInterval"/>
/// ticks, without blocking). The event buffer belongs to the holder of the token.</para>
/// <para><b>Tokens.</b> An event carries a slot index and that slot's generation, not a pointer:
/// an event fetched just before its socket was deregistered, and handled after, finds a newer
/// generation (or an empty slot) and is dropped instead of reaching a freed or reused entry.</para>
/// <para><b>Wake.</b> <see cref="Wake"/> writes the eventfd, which is registered level-triggered:
/// a blocked <c>epoll_wait</c> returns, and the poller drains the counter.</para>
/// <para><b>Closing under a notifier.</b> Any thread may wake the poller, and any thread that owns a
/// socket may register or deregister it, while the last worker to leave disposes the driver. A
/// thread that checked the disposed flag and then made its system call could be preempted in
/// between; the disposal would close the descriptors meanwhile, the kernel could give their numbers
/// to new descriptors (a socket, a file, another runtime's epoll instance), and the late call would
/// write 8 bytes into one of them, or add or remove a socket in the wrong epoll set. So each such call
/// is fenced, as spawns are against the runtime's disposal (<c>JobRuntime.SpawnFence.cs</c>).
/// <see cref="_descriptorUsers"/> counts the calls between steps 1 and 3; a caller holds no lock and
/// waits for nothing in between. The caller (<see cref="Wake"/>, the <c>epoll_ctl</c> of
/// <see cref="Register"/> and of <see cref="Deregister"/>):</para>
/// <list type="number">
/// <item>Reads the disposed flag; set, it gives up (a wake or a removal has nothing left to do; a
/// registration fails). Otherwise it raises the count (a full fence), then reads the flag again.
/// Set now: it lowers the count and gives up.</item>
/// <item>Makes its system call on the descriptor.</item>
/// <item>Lowers the count.</item>
/// </list>
/// <para>And <see cref="Dispose"/>:</para>
/// <list type="number">
/// <item>Sets the disposed flag, then a full fence.</item>
/// <item>Waits until the count reads 0.</item>
/// <item>Only then closes the descriptors.</item>
/// </list>
/// <para>Both sides write, fence, then read what the other writes, so at least one sees the other:
/// either the caller sees the flag and makes no call, or the disposal sees the count and waits for
/// the call to return. The wait is one system call long (none of them blocks), or one time slice when
/// the caller was preempted; an interlocked increment and decrement beside a system call is what the
/// notifier pays. The first read of the flag is what lets the count drain: without it, callers that
/// keep coming after the disposal (wakers hammering <see cref="Wake"/>) would keep raising and
/// lowering it, and the disposal could spin for as long as they go on without ever reading 0. With
/// it, only a caller that read the flag before the disposal set it can raise the count.</para>
/// </remarks>
internal sealed unsafe class IoDriver : IDisposable
{
    /// <summary>
    /// Events fetched per <c>epoll_wait</c>. 1024 is Tokio's default event capacity: large enough that
    /// a busy server drains its ready sockets in a few calls, small enough (12-16 KiB) to stay in cache.
    /// </summary>
    internal const int EventCapacity = 1024;

    private const ulong WakeToken = ulong.MaxValue;

    private readonly int _epfd;
    private readonly int _eventFd;
    private readonly Lock _tableLock = new();
    private readonly Stack<int> _freeSlots = new();
    private IoRegistration?[] _slots = new IoRegistration?[64];
    private uint[] _generations = new uint[64];
    private int _slotCount;
    private int _registered;
    private int _pollerHeld;
    private int _descriptorUsers;
    private long _polls;
    private byte* _events;
    private volatile bool _disposed;

    private IoDriver(int epfd, int eventFd)
    {
        _epfd = epfd;
        _eventFd = eventFd;
        _events = (byte*)NativeMemory.Alloc((nuint)(EventCapacity * LinuxNative.EventStride));
    }

    /// <summary>Sockets registered now (for tests and diagnostics).</summary>
    internal int RegisteredCount => Volatile.Read(ref _registered);

    internal bool IsDisposed => _disposed;

    /// <summary>Polls so far, by whoever held the token: the runtime's watchdog reads it to see that somebody still polls.</summary>
    internal long PollCount => Volatile.Read(ref _polls);

    /// <summary>Whether some thread holds the poller token now (it polls, or is about to, or dispatches).</summary>
    internal bool IsPollerHeld => Volatile.Read(ref _pollerHeld) != 0;

    /// <summary>Creates the epoll instance and its eventfd.</summary>
    /// <exception cref="IOException">The kernel refused (out of descriptors, say).</exception>
    internal static IoDriver Create()
    {
        int epfd = LinuxNative.EpollCreate1(LinuxNative.CloExec);
        if (epfd < 0)
        {
            throw Failure("epoll_create1", Marshal.GetLastPInvokeError());
        }

        int eventFd = LinuxNative.EventFd(0, LinuxNative.CloExec | LinuxNative.NonBlock);
        if (eventFd < 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            LinuxNative.Close(epfd);
            throw Failure("eventfd", errno);
        }

        if (LinuxNative.Control(epfd, LinuxNative.EpollCtlAdd, eventFd, LinuxNative.EpollIn, WakeToken) != 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            LinuxNative.Close(eventFd);
            LinuxNative.Close(epfd);
            throw Failure("epoll_ctl", errno);
        }

        return new IoDriver(epfd, eventFd);
    }

    /// <summary>Registers a non-blocking socket, edge-triggered, for both directions.</summary>
    /// <exception cref="ObjectDisposedException">The runtime's driver was shut down (naming the runtime, see <see cref="RuntimeDisposed"/>).</exception>
    /// <exception cref="IOException">epoll refused the descriptor.</exception>
    internal IoRegistration Register(int fd)
    {
        var registration = new IoRegistration(this, fd);
        int slot;
        lock (_tableLock)
        {
            if (_disposed)
            {
                throw RuntimeDisposed();
            }

            if (!_freeSlots.TryPop(out slot))
            {
                slot = _slotCount++;
                if (slot == _slots.Length)
                {
                    Array.Resize(ref _generations, slot * 2);
                    IoRegistration?[] grown = new IoRegistration?[slot * 2];
                    Array.Copy(_slots, grown, slot);
                    Volatile.Write(ref _slots, grown);
                }
            }

            registration.Token = ((ulong)_generations[slot] << 32) | (uint)slot;
            Volatile.Write(ref _slots[slot], registration);
        }

        // The table lock is released: a disposal may have started since the check above (see
        // "Closing under a notifier" in the remarks).
        if (!TryEnterDescriptorUse())
        {
            FreeSlot(registration);
            throw RuntimeDisposed();
        }

        const uint interest = LinuxNative.EpollIn | LinuxNative.EpollOut | LinuxNative.EpollRdHup | LinuxNative.EpollEt;
        int result = LinuxNative.Control(_epfd, LinuxNative.EpollCtlAdd, fd, interest, registration.Token);
        int error = Marshal.GetLastPInvokeError();
        ExitDescriptorUse();
        if (result != 0)
        {
            FreeSlot(registration);
            throw Failure("epoll_ctl", error);
        }

        Interlocked.Increment(ref _registered);
        return registration;
    }

    /// <summary>
    /// Fails a socket's waiters, and its later operations, for <paramref name="cause"/>; removes it from
    /// epoll if <paramref name="removeFromEpoll"/> (only while its descriptor is certainly still open:
    /// the caller closes it after this returns, or holds a reference on its handle, see
    /// <see cref="IoRegistrationReleaser"/>); and frees its slot.
    /// </summary>
    internal void Deregister(IoRegistration registration, IoAbortCause cause, bool removeFromEpoll)
    {
        registration.Abort(cause);
        if (removeFromEpoll && TryEnterDescriptorUse())
        {
            // A disposed driver has nothing to remove from: its epoll descriptor is closed, or about
            // to be, and its number may be another file's.
            LinuxNative.Control(_epfd, LinuxNative.EpollCtlDel, registration.Fd, 0, 0);
            ExitDescriptorUse();
        }

        if (FreeSlot(registration))
        {
            Interlocked.Decrement(ref _registered);
        }
    }

    /// <summary>Takes the poller token; false when another worker holds it.</summary>
    internal bool TryAcquirePoller() =>
        !_disposed && Volatile.Read(ref _pollerHeld) == 0 && Interlocked.CompareExchange(ref _pollerHeld, 1, 0) == 0;

    internal void ReleasePoller() => Volatile.Write(ref _pollerHeld, 0);

    /// <summary>
    /// Waits up to <paramref name="timeoutMilliseconds"/> (-1: until an event or <see cref="Wake"/>)
    /// and returns how many events are in the buffer. Poller holder only.
    /// </summary>
    internal int Poll(int timeoutMilliseconds)
    {
        Volatile.Write(ref _polls, _polls + 1); // only the token holder writes it
        int count = LinuxNative.EpollWait(_epfd, _events, EventCapacity, timeoutMilliseconds);
        if (count < 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            if (errno == LinuxNative.EINTR)
            {
                return 0;
            }

            throw Failure("epoll_wait", errno);
        }

        return count;
    }

    /// <summary>
    /// Hands the events of the last <see cref="Poll"/> to their sockets (poller holder only). Returns
    /// how many were socket events (not wake-ups).
    /// </summary>
    internal int Dispatch(int count)
    {
        int stride = LinuxNative.EventStride;
        int dataOffset = LinuxNative.EventDataOffset;
        int socketEvents = 0;
        IoRegistration?[] slots = Volatile.Read(ref _slots);
        for (int i = 0; i < count; i++)
        {
            byte* ev = _events + (i * stride);
            uint flags = *(uint*)ev;
            ulong token = *(ulong*)(ev + dataOffset);
            if (token == WakeToken)
            {
                ulong drained;
                LinuxNative.Read(_eventFd, (byte*)&drained, sizeof(ulong));
                continue;
            }

            int slot = (int)(uint)token;
            if (slot >= slots.Length)
            {
                slots = Volatile.Read(ref _slots);
                if (slot >= slots.Length)
                {
                    continue;
                }
            }

            IoRegistration? registration = Volatile.Read(ref slots[slot]);
            if (registration is null || registration.Token != token)
            {
                continue; // deregistered after this event was fetched
            }

            socketEvents++;
            const uint error = LinuxNative.EpollErr | LinuxNative.EpollHup;
            if ((flags & (LinuxNative.EpollIn | LinuxNative.EpollRdHup | error)) != 0)
            {
                registration.OnReady(write: false);
            }

            if ((flags & (LinuxNative.EpollOut | error)) != 0)
            {
                registration.OnReady(write: true);
            }
        }

        return socketEvents;
    }

    /// <summary>
    /// <see cref="Dispatch"/> with the calling thread's trampoline depth at its limit, so that every
    /// continuation the events release is deferred (to a worker's queue, or on a thread with no
    /// scheduler to the thread's own queue) instead of running inside the poll (poller holder only).
    /// </summary>
    internal void DispatchDeferred(int count, PerThread state)
    {
        int depth = state.Depth;
        state.Depth = MyriadDefaults.MaxInlineDepth;
        try
        {
            Dispatch(count);
        }
        finally
        {
            state.Depth = depth;
        }
    }

    /// <summary>Interrupts a blocked <see cref="Poll"/> (any thread).</summary>
    internal void Wake()
    {
        if (!TryEnterDescriptorUse())
        {
            return; // no poller is left to wake
        }

        ulong one = 1;
        LinuxNative.Write(_eventFd, (byte*)&one, sizeof(ulong));
        ExitDescriptorUse();
    }

    /// <summary>
    /// Shuts the driver down once no worker can poll any more (the runtime's workers have exited):
    /// every registered socket's waiters fail with <see cref="ObjectDisposedException"/>, as do its
    /// later operations.
    /// </summary>
    public void Dispose()
    {
        List<IoRegistration> live = new();
        lock (_tableLock)
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            foreach (IoRegistration? registration in _slots)
            {
                if (registration is not null)
                {
                    live.Add(registration);
                }
            }
        }

        // Step 1 of the disposal's side of the descriptor fence (see the remarks): the flag was set
        // under the lock, whose release does not order it before the read of the count.
        Interlocked.MemoryBarrier();

        foreach (IoRegistration registration in live)
        {
            registration.Abort(IoAbortCause.RuntimeDisposed);
        }

        // The workers have left, but the runtime's watchdog may be in a rescue poll (it polls when
        // nobody else did for a while): take the token, never to give it back, before the event
        // buffer and the descriptors go. TryAcquirePoller refuses once _disposed is set, so only a
        // poll that took the token before that can be in flight, and it ends quickly (no timeout).
        SpinWait spin = default;
        while (Interlocked.CompareExchange(ref _pollerHeld, 1, 0) != 0)
        {
            spin.SpinOnce();
        }

        // Steps 2 and 3: no wake, registration or removal that passed its check is still to make
        // its call once the descriptors close.
        spin = default;
        while (Volatile.Read(ref _descriptorUsers) != 0)
        {
            spin.SpinOnce();
        }

        LinuxNative.Close(_eventFd);
        LinuxNative.Close(_epfd);
        NativeMemory.Free(_events);
        _events = null;
    }

    /// <summary>
    /// Step 1 of a caller's side of the descriptor fence (see the remarks): false, with nothing held,
    /// once the driver is disposed; true, and the descriptors stay open until <see cref="ExitDescriptorUse"/>.
    /// </summary>
    private bool TryEnterDescriptorUse()
    {
        if (_disposed)
        {
            return false;
        }

        Interlocked.Increment(ref _descriptorUsers);
        if (_disposed)
        {
            Interlocked.Decrement(ref _descriptorUsers);
            return false;
        }

        return true;
    }

    /// <summary>Step 3 of a caller's side of the descriptor fence.</summary>
    private void ExitDescriptorUse() => Interlocked.Decrement(ref _descriptorUsers);

    /// <summary>
    /// The exception docs/io.md promises for a socket created once the runtime was disposed: the
    /// driver is internal, so it names the runtime, with the same message as the operations of a
    /// socket that the runtime's disposal aborted.
    /// </summary>
    private static ObjectDisposedException RuntimeDisposed() => IoAbortCause.RuntimeDisposed.Create();

    private bool FreeSlot(IoRegistration registration)
    {
        int slot = (int)(uint)registration.Token;
        lock (_tableLock)
        {
            if (!ReferenceEquals(_slots[slot], registration))
            {
                return false;
            }

            Volatile.Write(ref _slots[slot], null);
            _generations[slot]++;
            _freeSlots.Push(slot);
            return true;
        }
    }

    internal static IOException Failure(string call, int errno) =>
        new($"{call} failed: {Marshal.GetPInvokeErrorMessage(errno)} (errno {errno}).", errno);
}
