using System;
using System.Threading;

namespace Myriad.Channels;

/// <summary>
/// Creates channels: typed conduits between jobs with Go's semantics (<c>make(chan T)</c>,
/// <c>make(chan T, n)</c>), plus an unbounded kind. See <see cref="Chan{T}"/>.
/// </summary>
public static partial class Chan
{
    /// <summary>
    /// A rendezvous channel (Go's <c>make(chan T)</c>): a send completes only when a receiver takes
    /// the item, and a receive only when a sender offers one.
    /// </summary>
    public static Chan<T> Unbuffered<T>() => new(0);

    /// <summary>
    /// A channel that buffers up to <paramref name="capacity"/> items (Go's <c>make(chan T, n)</c>):
    /// a send waits only while the buffer is full. A capacity of 0 makes an unbuffered channel, as in Go
    /// and in .NET's <c>Channel.CreateBounded(0)</c>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is negative.</exception>
    public static Chan<T> Bounded<T>(int capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(capacity);
        return new(capacity);
    }

    /// <summary>A channel whose sends never wait: the buffer grows as needed. Receives wait while it is empty.</summary>
    public static Chan<T> Unbounded<T>() => new(Chan<T>.UnboundedCapacity);

    /// <summary>What a channel closed without an error holds in place of the close error.</summary>
    internal static readonly object ClosedCleanly = new();
}
