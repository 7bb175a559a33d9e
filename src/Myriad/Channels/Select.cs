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
/// <para>Unlike Go, a null channel is an error (<see cref="ArgumentNullException"/>) rather than a case
/// that never fires: leave the case out instead.</para>
/// </remarks>
public static class Select
{
    /// <summary>Starts a select with a receive case; see <see cref="SelectBuilder.Receive{T}"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="channel"/> is null.</exception>
    public static SelectBuilder Receive<T>(Chan<T> channel, Action<T>? onReceived = null) =>
        default(SelectBuilder).Receive(channel, onReceived);

    /// <summary>Starts a select with a receive case that reports closure; see <see cref="SelectBuilder.ReceiveOk{T}"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="channel"/> is null.</exception>
    public static SelectBuilder ReceiveOk<T>(Chan<T> channel, Action<ReceiveResult<T>>? onReceived = null) =>
        default(SelectBuilder).ReceiveOk(channel, onReceived);

    /// <summary>Starts a select with a send case; see <see cref="SelectBuilder.Send{T}"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="channel"/> is null.</exception>
    public static SelectBuilder Send<T>(Chan<T> channel, T item, Action? onSent = null) =>
        default(SelectBuilder).Send(channel, item, onSent);
}
