using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Threading;
using System.Threading.Channels;

namespace Myriad.Channels;

/// <summary>
/// The receiving side of a <see cref="Chan{T}"/>, for an API that should only consume: Go's
/// <c>&lt;-chan T</c>. A <see cref="Chan{T}"/> converts to it implicitly; it cannot be converted back.
/// </summary>
/// <remarks>A struct over the channel: free to create and pass. The default value, like a Go nil
/// channel, has no channel: a select case on it never fires, and every other member throws
/// <see cref="InvalidOperationException"/>.</remarks>
/// <typeparam name="T">The element type.</typeparam>
public readonly struct ReceiveOnlyChan<T> : IEquatable<ReceiveOnlyChan<T>>
{
    private readonly Chan<T>? _channel;

    /// <summary>A receive-only view of <paramref name="channel"/> (null gives the channel-less view).</summary>
    public ReceiveOnlyChan(Chan<T>? channel) => _channel = channel;

    /// <summary>A receive-only view of <paramref name="channel"/>.</summary>
    public static implicit operator ReceiveOnlyChan<T>(Chan<T>? channel) => new(channel);

    /// <summary>The channel, or null for the default view (select cases and the views' own members use it).</summary>
    internal Chan<T>? Channel => _channel;

    private Chan<T> Required => _channel ?? throw new InvalidOperationException("This ReceiveOnlyChan has no channel (it is the default value).");

    /// <summary>Whether this view has no channel (a select case on it never fires).</summary>
    public bool IsNull => _channel is null;

    /// <inheritdoc cref="Chan{T}.Capacity"/>
    public int Capacity => Required.Capacity;

    /// <inheritdoc cref="Chan{T}.Count"/>
    public int Count => Required.Count;

    /// <inheritdoc cref="Chan{T}.IsClosed"/>
    public bool IsClosed => Required.IsClosed;

    /// <inheritdoc cref="Chan{T}.IsCompleted"/>
    public bool IsCompleted => Required.IsCompleted;

    /// <inheritdoc cref="Chan{T}.Reader"/>
    public ChannelReader<T> Reader => Required.Reader;

    /// <inheritdoc cref="Chan{T}.ReceiveAsync"/>
    public Job<T> ReceiveAsync(CancellationToken cancellationToken = default) => Required.ReceiveAsync(cancellationToken);

    /// <inheritdoc cref="Chan{T}.ReceiveOkAsync"/>
    public Job<ReceiveResult<T>> ReceiveOkAsync(CancellationToken cancellationToken = default) => Required.ReceiveOkAsync(cancellationToken);

    /// <inheritdoc cref="Chan{T}.TryReceive"/>
    public bool TryReceive([MaybeNullWhen(false)] out T item) => Required.TryReceive(out item);

    /// <inheritdoc cref="Chan{T}.ReadAllAsync"/>
    /// <remarks>The channel's own enumerable (<see cref="ChanRange{T}"/>), not the interface:
    /// <c>await foreach</c> then binds to its members directly, as over the channel itself, instead of
    /// calling through <see cref="IAsyncEnumerator{T}"/> for every item.</remarks>
    public ChanRange<T> ReadAllAsync(CancellationToken cancellationToken = default) => Required.ReadAllAsync(cancellationToken);

    /// <inheritdoc/>
    public bool Equals(ReceiveOnlyChan<T> other) => ReferenceEquals(_channel, other._channel);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is ReceiveOnlyChan<T> other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _channel is null ? 0 : System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(_channel);

    /// <summary>Whether both views are of the same channel.</summary>
    public static bool operator ==(ReceiveOnlyChan<T> left, ReceiveOnlyChan<T> right) => left.Equals(right);

    /// <summary>Whether the views are of different channels.</summary>
    public static bool operator !=(ReceiveOnlyChan<T> left, ReceiveOnlyChan<T> right) => !left.Equals(right);
}

/// <summary>
/// The sending side of a <see cref="Chan{T}"/>, for an API that should only produce: Go's
/// <c>chan&lt;- T</c>. It may close the channel, as in Go. A <see cref="Chan{T}"/> converts to it
/// implicitly; it cannot be converted back.
/// </summary>
/// <remarks>See <see cref="ReceiveOnlyChan{T}"/> for the default value.</remarks>
/// <typeparam name="T">The element type.</typeparam>
public readonly struct SendOnlyChan<T> : IEquatable<SendOnlyChan<T>>
{
    private readonly Chan<T>? _channel;

    /// <summary>A send-only view of <paramref name="channel"/> (null gives the channel-less view).</summary>
    public SendOnlyChan(Chan<T>? channel) => _channel = channel;

    /// <summary>A send-only view of <paramref name="channel"/>.</summary>
    public static implicit operator SendOnlyChan<T>(Chan<T>? channel) => new(channel);

    internal Chan<T>? Channel => _channel;

    private Chan<T> Required => _channel ?? throw new InvalidOperationException("This SendOnlyChan has no channel (it is the default value).");

    /// <inheritdoc cref="ReceiveOnlyChan{T}.IsNull"/>
    public bool IsNull => _channel is null;

    /// <inheritdoc cref="Chan{T}.Capacity"/>
    public int Capacity => Required.Capacity;

    /// <inheritdoc cref="Chan{T}.Count"/>
    public int Count => Required.Count;

    /// <inheritdoc cref="Chan{T}.IsClosed"/>
    public bool IsClosed => Required.IsClosed;

    /// <inheritdoc cref="Chan{T}.Writer"/>
    public ChannelWriter<T> Writer => Required.Writer;

    /// <inheritdoc cref="Chan{T}.SendAsync"/>
    public Job SendAsync(T item, CancellationToken cancellationToken = default) => Required.SendAsync(item, cancellationToken);

    /// <inheritdoc cref="Chan{T}.TrySend"/>
    public bool TrySend(T item) => Required.TrySend(item);

    /// <inheritdoc cref="Chan{T}.Close"/>
    public void Close(Exception? error = null) => Required.Close(error);

    /// <inheritdoc cref="Chan{T}.SendAllAsync"/>
    public Job SendAllAsync(IAsyncEnumerable<T> source, CancellationToken cancellationToken = default) => Required.SendAllAsync(source, cancellationToken);

    /// <inheritdoc/>
    public bool Equals(SendOnlyChan<T> other) => ReferenceEquals(_channel, other._channel);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is SendOnlyChan<T> other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _channel is null ? 0 : System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(_channel);

    /// <summary>Whether both views are of the same channel.</summary>
    public static bool operator ==(SendOnlyChan<T> left, SendOnlyChan<T> right) => left.Equals(right);

    /// <summary>Whether the views are of different channels.</summary>
    public static bool operator !=(SendOnlyChan<T> left, SendOnlyChan<T> right) => !left.Equals(right);
}
