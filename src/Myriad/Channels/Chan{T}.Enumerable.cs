using System.Collections.Generic;
using System.Threading;

namespace Myriad.Channels;

public sealed partial class Chan<T>
{
    /// <summary>
    /// Receives every item until the channel is closed and drained (Go's <c>for v := range ch</c>):
    /// <c>await foreach (var item in ch.ReadAllAsync()) { ... }</c>.
    /// </summary>
    /// <param name="cancellationToken">Stops the enumeration with <see cref="System.OperationCanceledException"/>
    /// while it waits; an item is never lost to a cancellation (see <see cref="ReceiveAsync"/>).</param>
    /// <returns>The items in channel order, as a <see cref="ChanRange{T}"/> (an
    /// <see cref="IAsyncEnumerable{T}"/>). If the channel was closed with an error, the enumeration
    /// throws it after the last item.</returns>
    /// <remarks>Several enumerations may run at once; each item goes to exactly one of them. Items
    /// already buffered are taken without suspending and without allocating; in a job, a wait resumes
    /// as any other await of a job does (see <see cref="ChanRange{T}"/>). One enumerator serves one
    /// <c>MoveNextAsync</c> at a time: a call while the previous one still waits throws
    /// <see cref="System.InvalidOperationException"/> and takes nothing. Disposing the enumerator while
    /// a <c>MoveNextAsync</c> waits withdraws that read: it ends with
    /// <see cref="System.OperationCanceledException"/> and the next item stays in the channel, unless an
    /// item reached it first, which then stays its result (see <see cref="ChanRange{T}.DisposeAsync"/>).</remarks>
    public ChanRange<T> ReadAllAsync(CancellationToken cancellationToken = default) => new(this, cancellationToken);
}
