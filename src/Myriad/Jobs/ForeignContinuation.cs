using System;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>
/// A continuation registered through <see cref="IValueTaskSource"/> by code that is not Myriad's
/// (a <see cref="ValueTask"/> awaiter, <see cref="ValueTask.AsTask"/>). Honours the flags: the
/// caller's <see cref="ExecutionContext"/>, and its <see cref="SynchronizationContext"/> or
/// non-default <see cref="TaskScheduler"/> when the awaiter asked to resume there.
/// </summary>
internal sealed class ForeignContinuation : WorkItem
{
    private static readonly ContextCallback s_invoke = static s => ((ForeignContinuation)s!).Invoke();

    private readonly Action<object?> _action;
    private readonly object? _state;
    private readonly ExecutionContext? _context;
    private readonly object? _scheduling;

    private ForeignContinuation(Action<object?> action, object? state, ExecutionContext? context, object? scheduling)
    {
        _action = action;
        _state = state;
        _context = context;
        _scheduling = scheduling;
    }

    internal static ForeignContinuation Create(Action<object?> action, object? state, ValueTaskSourceOnCompletedFlags flags)
    {
        ArgumentNullException.ThrowIfNull(action);
        ExecutionContext? context = (flags & ValueTaskSourceOnCompletedFlags.FlowExecutionContext) != 0
            ? ExecutionContext.Capture()
            : null;
        object? scheduling = null;
        if ((flags & ValueTaskSourceOnCompletedFlags.UseSchedulingContext) != 0)
        {
            SynchronizationContext? sc = SynchronizationContext.Current;
            if (sc is not null && sc.GetType() != typeof(SynchronizationContext))
            {
                scheduling = sc;
            }
            else if (TaskScheduler.Current != TaskScheduler.Default)
            {
                scheduling = TaskScheduler.Current;
            }
        }

        return new ForeignContinuation(action, state, context, scheduling);
    }

    internal override void Execute(PerThread state)
    {
        switch (_scheduling)
        {
            case SynchronizationContext sc:
                sc.Post(static s => ((ForeignContinuation)s!).RunInContext(), this);
                break;
            case TaskScheduler ts:
                Task.Factory.StartNew(static s => ((ForeignContinuation)s!).RunInContext(), this, CancellationToken.None, TaskCreationOptions.DenyChildAttach, ts);
                break;
            default:
                RunInContext();
                break;
        }
    }

    private void RunInContext()
    {
        if (_context is null)
        {
            Invoke();
        }
        else
        {
            ExecutionContext.Run(_context, s_invoke, this);
        }
    }

    /// <summary>The consumer's callback; its exception must not unwind through the completion (see <see cref="ThrowHelper.ContinuationFailed"/>).</summary>
    private void Invoke()
    {
        try
        {
            _action(_state);
        }
        catch (Exception exception)
        {
            ThrowHelper.ContinuationFailed(exception);
        }
    }
}
