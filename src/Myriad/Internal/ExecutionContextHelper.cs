using System.Runtime.CompilerServices;
using System.Threading;

namespace Myriad.Internal;

/// <summary>
/// Cheap ExecutionContext checks for the resume path. <c>ExecutionContext.Capture()</c> is a
/// thread-static read that returns the process-wide default instance when no AsyncLocal is set; we
/// learn that instance once, on a fresh thread, and compare by reference afterwards.
/// </summary>
internal static class ExecutionContextHelper
{
    internal static readonly ExecutionContext Default = CaptureOnFreshThread();

    /// <summary>The flowing context, or null when it is the default (nothing to restore on resume).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ExecutionContext? CaptureNonDefault()
    {
        ExecutionContext? context = ExecutionContext.Capture();
        return ReferenceEquals(context, Default) ? null : context;
    }

    internal static bool CurrentIsDefault
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => ReferenceEquals(ExecutionContext.Capture(), Default);
    }

    /// <summary>After running a continuation inline in the default context, undo any AsyncLocal it set.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void RestoreDefaultIfChanged()
    {
        if (!ReferenceEquals(ExecutionContext.Capture(), Default))
        {
            ExecutionContext.Restore(Default);
        }
    }

    private static ExecutionContext CaptureOnFreshThread()
    {
        ExecutionContext? captured = null;
        var thread = new Thread(() => captured = ExecutionContext.Capture());
        thread.UnsafeStart();
        thread.Join();
        return captured!;
    }
}
