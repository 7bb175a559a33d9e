using System;
using System.Runtime.InteropServices;

namespace Myriad.IO;

/// <summary>
/// The few libc calls the Linux I/O driver needs, with blittable signatures (source-generated
/// marshalling only, so the library stays AOT-compatible). Every call reports failure through errno
/// (<see cref="Marshal.GetLastPInvokeError"/>).
/// </summary>
/// <remarks>
/// <c>struct epoll_event</c> is packed (12 bytes) on x86-64 and naturally aligned (16 bytes)
/// elsewhere, so events are read from a raw buffer with <see cref="EventStride"/> and
/// <see cref="EventDataOffset"/> instead of through a managed struct.
/// </remarks>
internal static unsafe partial class LinuxNative
{
    private const string Libc = "libc";

    internal const int EpollCtlAdd = 1;
    internal const int EpollCtlDel = 2;
    internal const uint EpollIn = 0x001;
    internal const uint EpollOut = 0x004;
    internal const uint EpollErr = 0x008;
    internal const uint EpollHup = 0x010;
    internal const uint EpollRdHup = 0x2000;
    internal const uint EpollEt = 1u << 31;
    internal const int CloExec = 0x80000; // EPOLL_CLOEXEC, EFD_CLOEXEC and SOCK_CLOEXEC alike
    internal const int NonBlock = 0x800;  // EFD_NONBLOCK and SOCK_NONBLOCK alike (O_NONBLOCK)

    internal const int EINTR = 4;
    internal const int EAGAIN = 11;
    internal const int ENFILE = 23;
    internal const int EMFILE = 24;
    internal const int ECONNABORTED = 103;
    internal const int EINPROGRESS = 115;

    /// <summary>Bytes between two events in an <c>epoll_wait</c> buffer.</summary>
    internal static readonly int EventStride = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 12 : 16;

    /// <summary>Offset of the 64-bit <c>data</c> field in one event.</summary>
    internal static readonly int EventDataOffset = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 4 : 8;

    /// <summary>True where the driver can run: Linux, on an architecture whose epoll layout is known above.</summary>
    internal static bool IsSupported { get; } = OperatingSystem.IsLinux()
        && RuntimeInformation.ProcessArchitecture is Architecture.X64 or Architecture.Arm64;

    [LibraryImport(Libc, EntryPoint = "epoll_create1", SetLastError = true)]
    internal static partial int EpollCreate1(int flags);

    [LibraryImport(Libc, EntryPoint = "epoll_ctl", SetLastError = true)]
    internal static partial int EpollCtl(int epfd, int op, int fd, byte* ev);

    [LibraryImport(Libc, EntryPoint = "epoll_wait", SetLastError = true)]
    internal static partial int EpollWait(int epfd, byte* events, int maxEvents, int timeout);

    [LibraryImport(Libc, EntryPoint = "eventfd", SetLastError = true)]
    internal static partial int EventFd(uint initval, int flags);

    [LibraryImport(Libc, EntryPoint = "read", SetLastError = true)]
    internal static partial nint Read(int fd, byte* buffer, nint count);

    [LibraryImport(Libc, EntryPoint = "write", SetLastError = true)]
    internal static partial nint Write(int fd, byte* buffer, nint count);

    [LibraryImport(Libc, EntryPoint = "close", SetLastError = true)]
    internal static partial int Close(int fd);

    [LibraryImport(Libc, EntryPoint = "accept4", SetLastError = true)]
    internal static partial int Accept4(int fd, byte* address, int* addressLength, int flags);

    [LibraryImport(Libc, EntryPoint = "connect", SetLastError = true)]
    internal static partial int Connect(int fd, byte* address, int addressLength);

    [LibraryImport(Libc, EntryPoint = "getsockname", SetLastError = true)]
    internal static partial int GetSockName(int fd, byte* address, int* addressLength);

    /// <summary>Registers or removes <paramref name="fd"/>; <paramref name="data"/> comes back with each of its events.</summary>
    internal static int Control(int epfd, int op, int fd, uint events, ulong data)
    {
        byte* ev = stackalloc byte[16];
        *(uint*)ev = events;
        *(ulong*)(ev + EventDataOffset) = data;
        return EpollCtl(epfd, op, fd, ev);
    }
}
