using System;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Myriad.Jobs;

/// <summary>
/// The delegate the BCL's <c>ValueTask</c> awaiters (plain and configured, generic or not) pass to
/// <see cref="IValueTaskSource.OnCompleted"/> together with the awaiter's <see cref="Action"/> as its
/// state: a static delegate that only calls that action. It is not public, so it is learned once by
/// awaiting a probe source; recognizing it tells a source that the registration is a bare action
/// call with nothing of the awaiter's own around it (see <see cref="ForeignAwait.OfValueTaskContinuation"/>).
/// </summary>
internal static class ValueTaskInvoker
{
    /// <summary>The BCL's invoker, or a delegate that matches no registration if the probe saw none.</summary>
    internal static readonly Action<object?> Delegate = Probe();

    private static Action<object?> Probe()
    {
        var probe = new ProbeSource();
        new ValueTask(probe, 0).GetAwaiter().UnsafeOnCompleted(static () => { });
        return probe.Seen ?? (static _ => { });
    }

    /// <summary>A source that stays pending and records what the awaiter registers.</summary>
    private sealed class ProbeSource : IValueTaskSource
    {
        internal Action<object?>? Seen;

        public ValueTaskSourceStatus GetStatus(short token) => ValueTaskSourceStatus.Pending;

        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) => Seen = continuation;

        public void GetResult(short token)
        {
        }
    }
}
