using System.Runtime.CompilerServices;
using System.Threading;

namespace Myriad.Scheduling;

/// <summary>
/// What a spawn may need when its body starts besides its state and body: a cancellation token that
/// can be canceled and a captured <see cref="ExecutionContext"/> other than the default. Both are
/// rare on hot paths, so a queued spawn keeps them in one reference field, packed by
/// <see cref="Pack"/>:
/// <list type="bullet">
/// <item><c>null</c>: neither (the usual spawn);</item>
/// <item>an <see cref="ExecutionContext"/>: only a context;</item>
/// <item>a <see cref="SpawnStartExtras"/>: a token that can be canceled, and the context if any.</item>
/// </list>
/// </summary>
/// <remarks>
/// A million spawns queued at once (a million sleepers started in a loop) keep a million spawn items
/// alive until workers start them, and every collection they survive copies them. A token and a
/// context field cost 16 bytes of each item; packed, the usual spawn pays 8, and a spawn with a
/// cancelable token pays for this object instead (as a delay with a cancelable token pays for its
/// own cell).
/// </remarks>
internal sealed class SpawnStartExtras
{
    private readonly CancellationToken _cancellationToken;
    private readonly ExecutionContext? _context;

    private SpawnStartExtras(CancellationToken cancellationToken, ExecutionContext? context)
    {
        _cancellationToken = cancellationToken;
        _context = context;
    }

    /// <summary>The packed form of <paramref name="context"/> (null: the default) and <paramref name="cancellationToken"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static object? Pack(ExecutionContext? context, CancellationToken cancellationToken) =>
        cancellationToken.CanBeCanceled ? new SpawnStartExtras(cancellationToken, context) : context;

    /// <summary>Unpacks what <see cref="Pack"/> produced.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ExecutionContext? Unpack(object? packed, out CancellationToken cancellationToken)
    {
        if (packed is SpawnStartExtras extras)
        {
            cancellationToken = extras._cancellationToken;
            return extras._context;
        }

        cancellationToken = default;
        return Unsafe.As<ExecutionContext?>(packed);
    }
}
