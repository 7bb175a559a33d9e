using System.Collections.Generic;
using System.Runtime.CompilerServices;
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
    /// <returns>The items in channel order. If the channel was closed with an error, the enumeration
    /// throws it after the last item.</returns>
    /// <remarks>Several enumerations may run at once; each item goes to exactly one of them. Items
    /// already buffered are taken without suspending.</remarks>
    public async IAsyncEnumerable<T> ReadAllAsync([EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        while (true)
        {
            while (TryReceive(out T? item))
            {
                yield return item;
                cancellationToken.ThrowIfCancellationRequested();
            }

            (T value, bool ok) = await ReceiveOkAsync(cancellationToken);
            if (!ok)
            {
                yield break;
            }

            yield return value;
        }
    }
}
