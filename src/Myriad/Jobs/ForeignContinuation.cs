using System;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>
/// A continuation of code that is not a job, registered on a job's cell with something to honour: a
/// <see cref="ValueTask"/> awaiter's flags (<see cref="IValueTaskSource"/>), or an awaiter of
/// <see cref="Job"/> used by <c>async Task</c> code that captured its context. It resumes as a
/// <see cref="Task"/> await would: on the captured <see cref="SynchronizationContext"/> or
/// non-default <see cref="TaskScheduler"/>, with the captured <see cref="ExecutionContext"/>; with
/// nothing captured, inline on a thread of no runtime and on the .NET thread pool otherwise (code that
/// is not a runtime's job never runs on the runtime's threads, see <see cref="Trampoline.RunForeign"/>).
/// </summary>
internal sealed class ForeignContinuation : WorkItem
{
    private static readonly ContextCallback s_invoke = static s => ((ForeignContinuation)s!).Invoke();
    private static readonly Action<object?> s_invokeAction = static a => ((Action)a!)();

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
        object? scheduling = (flags & ValueTaskSourceOnCompletedFlags.UseSchedulingContext) != 0 ? CaptureScheduling() : null;
        return new ForeignContinuation(action, state, context, scheduling);
    }

    /// <summary>
    /// The continuation to register for an <see cref="Action"/> of code awaiting a job: the action
    /// itself when there is nothing to honour (no allocation), a wrapper otherwise.
    /// </summary>
    /// <remarks>
    /// With <paramref name="flowExecutionContext"/> (an awaiter's <c>OnCompleted</c>) the default
    /// context is something to honour too, as in a <see cref="Task"/>'s <c>OnCompleted</c>: the
    /// continuation runs inline on the completing thread, and without it would see that thread's
    /// AsyncLocals, and leave there what it sets itself. Run in the captured context instead
    /// (<see cref="RunInContext"/>), it sees its own, and <see cref="ExecutionContext.Run"/> puts the
    /// completer's ExecutionContext and SynchronizationContext back afterwards, whether the captured
    /// context is the default or not. That costs this wrapper, as a Task's OnCompleted allocates one.
    /// Compiler-generated code calls <c>UnsafeOnCompleted</c> (the awaiters are
    /// <see cref="System.Runtime.CompilerServices.ICriticalNotifyCompletion"/>), which flows nothing
    /// and keeps the bare action; so does a capture under <see cref="ExecutionContext.SuppressFlow"/>
    /// (<see cref="ExecutionContext.Capture"/> is null then), as with a Task.
    /// </remarks>
    internal static object ForAction(Action action, bool flowExecutionContext, bool continueOnCapturedContext)
    {
        ExecutionContext? context = flowExecutionContext ? ExecutionContext.Capture() : null;
        object? scheduling = continueOnCapturedContext ? CaptureScheduling() : null;
        return context is null && scheduling is null ? action : new ForeignContinuation(s_invokeAction, action, context, scheduling);
    }

    /// <summary>What a <see cref="Task"/> await captures: a non-default SynchronizationContext, else a non-default TaskScheduler, else nothing.</summary>
    private static object? CaptureScheduling()
    {
        SynchronizationContext? sc = SynchronizationContext.Current;
        if (sc is not null && sc.GetType() != typeof(SynchronizationContext))
        {
            return sc;
        }

        TaskScheduler current = TaskScheduler.Current;
        return current != TaskScheduler.Default ? current : null;
    }

    /// <summary>
    /// Code that is not a job: on a runtime's thread it goes to the thread pool, a SynchronizationContext
    /// or a TaskScheduler, and runs none of the runtime's code. A single-threaded runtime that queued
    /// it (a completion at the trampoline's depth limit, any completion on a deterministic runtime)
    /// must pass it on before its drive returns, as it does a bare <see cref="Action"/>'s
    /// <see cref="ActionWorkItem"/>, not leave it for a next drive that may never come.
    /// </summary>
    internal override bool WakesOutside(Scheduling.JobRuntime runtime) => true;

    internal override void Execute(PerThread state)
    {
        switch (_scheduling)
        {
            case SynchronizationContext sc:
                sc.Post(static s => ((ForeignContinuation)s!).RunInContext(), this);
                break;
            case TaskScheduler ts:
                // Run as a task of that scheduler, so that TaskScheduler.Current is it again and the
                // code's next await stays there too.
                Task.Factory.StartNew(static s => ((ForeignContinuation)s!).RunInContext(), this, CancellationToken.None, TaskCreationOptions.DenyChildAttach, ts);
                break;
            default:
                if (state.Context is not null)
                {
                    Trampoline.RunOnThreadPool(this); // never on a runtime's thread; the pool thread has no context, so it runs there
                }
                else
                {
                    RunInContext();
                }

                break;
        }
    }

    /// <summary>
    /// Resumes code that is not a runtime's job without running it on the calling thread:
    /// <paramref name="continuation"/> is a bare <see cref="Action"/> (nothing captured), a
    /// <see cref="ForeignContinuation"/>, which still goes to its captured SynchronizationContext or
    /// TaskScheduler, and to the thread pool when it has none, or a job of no runtime, which runs on
    /// the thread pool (see <see cref="JobCell"/>'s <c>ResumesForeignWaitersAsynchronously</c>).
    /// False, having done nothing, for any other continuation (a runtime's job, which goes home).
    /// </summary>
    internal static bool TryRunAsynchronously(object continuation)
    {
        switch (continuation)
        {
            case Action action:
                ThreadPool.UnsafeQueueUserWorkItem(static a => Trampoline.InvokeForeign(a), action, preferLocal: false);
                return true;
            case ForeignContinuation { _scheduling: null } foreign:
                ThreadPool.UnsafeQueueUserWorkItem(static f => f.RunInContext(), foreign, preferLocal: false);
                return true;
            case ForeignContinuation foreign:
                foreign.Execute(PerThread.Current); // posts or starts a task: never inline
                return true;
            case JobCell { IsJobOfNoRuntime: true } job:
                Trampoline.RunOnThreadPool(job);
                return true;
            case ForeignAwait { ResumesOnNoRuntime: true } foreign:
                // A job of no runtime awaiting through a ValueTask (a ChannelReader view's ReadAsync,
                // AsValueTask()): registered as its own resume (see JobBox.OnCompletedFromValueTask),
                // it has no runtime to go home to, and run inline it ran inside the sender's TrySend,
                // which waited for it (a consumer that then waited for its producer hung).
                Trampoline.RunOnThreadPool(foreign);
                return true;
            default:
                return false;
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
