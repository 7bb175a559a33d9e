using System;
using System.Threading.Channels;

namespace Myriad.Channels;

/// <summary>
/// Go's <c>select</c>: waits on several channel operations at once and performs exactly one.
/// </summary>
/// <example>
/// <code>
/// int fired = await Select
///     .Receive(requests, r => Handle(r))          // case 0
///     .Send(replies, next, () => sent++)          // case 1
///     .Timeout(TimeSpan.FromSeconds(1));          // case 2
/// </code>
/// </example>
/// <remarks>
/// <para><b>Semantics.</b> Exactly one case commits: a receive case that loses never takes an item, a
/// send case that loses never delivers its item. If several cases are ready at once, one is chosen
/// uniformly at random, so that no channel starves. If none is ready, the select waits (unless it has
/// a <see cref="SelectBuilder.Default"/> case) until one becomes ready, its timeout expires, or its
/// cancellation token fires. A receive case on a closed, drained channel is always ready (as in Go),
/// as is a send case on a closed channel (which makes the select throw <see cref="ChannelClosedException"/>).</para>
/// <para><b>Channels of different element types</b> mix freely in one select.</para>
/// <para>As in Go, a case on a null channel never fires (the idiom for turning a case off in a loop:
/// set the channel variable to null). A select whose cases are all disabled so, with no default, timeout
/// or cancellation, would wait forever: it throws <see cref="InvalidOperationException"/> instead.</para>
/// </remarks>
public static class Select
{
    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder Receive<T>(Chan<T>? channel, Action<T>? onReceived = null) =>
        default(SelectBuilder).Receive(channel, onReceived);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder Receive<TState, T>(Chan<T>? channel, TState state, Action<TState, T> onReceived) =>
        default(SelectBuilder).Receive(channel, state, onReceived);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder Receive<T>(ReceiveOnlyChan<T> channel, Action<T>? onReceived = null) =>
        default(SelectBuilder).Receive(channel, onReceived);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder Receive<TState, T>(ReceiveOnlyChan<T> channel, TState state, Action<TState, T> onReceived) =>
        default(SelectBuilder).Receive(channel, state, onReceived);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder ReceiveOk<T>(Chan<T>? channel, Action<ReceiveResult<T>>? onReceived = null) =>
        default(SelectBuilder).ReceiveOk(channel, onReceived);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder ReceiveOk<TState, T>(Chan<T>? channel, TState state, Action<TState, ReceiveResult<T>> onReceived) =>
        default(SelectBuilder).ReceiveOk(channel, state, onReceived);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder ReceiveOk<T>(ReceiveOnlyChan<T> channel, Action<ReceiveResult<T>>? onReceived = null) =>
        default(SelectBuilder).ReceiveOk(channel, onReceived);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder ReceiveOk<TState, T>(ReceiveOnlyChan<T> channel, TState state, Action<TState, ReceiveResult<T>> onReceived) =>
        default(SelectBuilder).ReceiveOk(channel, state, onReceived);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder Send<T>(Chan<T>? channel, T item, Action? onSent = null) =>
        default(SelectBuilder).Send(channel, item, onSent);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder Send<TState, T>(Chan<T>? channel, T item, TState state, Action<TState> onSent) =>
        default(SelectBuilder).Send(channel, item, state, onSent);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder Send<T>(SendOnlyChan<T> channel, T item, Action? onSent = null) =>
        default(SelectBuilder).Send(channel, item, onSent);

    /// <summary>Starts a select with this case; see the <see cref="SelectBuilder"/> method of the same name and parameters.</summary>
    public static SelectBuilder Send<TState, T>(SendOnlyChan<T> channel, T item, TState state, Action<TState> onSent) =>
        default(SelectBuilder).Send(channel, item, state, onSent);
}
