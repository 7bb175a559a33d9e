using System;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>
/// A pooled cell completed by whoever rented it (possibly later): a synchronous failure of an async method,
/// <see cref="Job.FromException(Exception)"/>, <see cref="Job.FromCanceled(System.Threading.CancellationToken)"/>,
/// and internal completions such as WhenAll.
/// </summary>
internal sealed class PooledBox<T> : SourceBox<T>
{
    private static readonly BoxPool<PooledBox<T>> s_pool = BoxPool<PooledBox<T>>.Shared;

    internal static PooledBox<T> Rent() => s_pool.Rent() ?? new();

    internal static PooledBox<T> Faulted(Exception exception)
    {
        ArgumentNullException.ThrowIfNull(exception);
        PooledBox<T> box = Rent();
        box.SetException(exception);
        return box;
    }

    private protected override void Release()
    {
        ResetBox();
        s_pool.Return(this);
    }
}
