using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>
/// The <see cref="SynchronizationContext"/> a job on a runtime shows to the awaiter of a task that
/// runs its continuations asynchronously (<see cref="TaskCreationOptions.RunContinuationsAsynchronously"/>,
/// the usual <see cref="TaskCompletionSource{TResult}"/>), while the awaiter registers and only then.
/// </summary>
/// <remarks>
/// <para><b>Why.</b> A job hides the thread's own context when it registers on a non-Myriad awaiter
/// (a job never resumes on a <see cref="SynchronizationContext"/>), and the awaiter then calls the
/// job's continuation (<see cref="ForeignAwait"/>), which sends the job back to its runtime. For a
/// task that runs continuations asynchronously, the TPL first queues that call to the .NET thread
/// pool: the resume made two thread hops, completer to pool thread to worker, each a wake-up on a
/// 2-core machine where both pools' threads compete for the cores (a ping-pong between two jobs
/// through such completion sources ran 7x slower than between two <c>async Task</c> methods).
/// With this context captured instead, the TPL posts the continuation here from the completing
/// thread, and the post queues the job on its runtime at once: one hop, or none when the completer
/// is a thread of the same runtime (the job is queued behind it, never run inside the completion,
/// as the task asked).</para>
/// <para><b>Which awaiters.</b> <c>TaskAwaiter</c> and <c>TaskAwaiter&lt;T&gt;</c> (a plain
/// <c>await task</c>) of a task created with that option: with any other task the TPL runs the
/// continuation inline on the completing thread, and capturing a context would only cost an extra
/// allocation per await. The task is read from the awaiter, a struct whose one field it is
/// (<see cref="TaskAwaiterKind{TAwaiter}"/> checks that once per awaiter type).</para>
/// <para><b>Post</b> recognizes the TPL's call (its state is the job's continuation delegate) and
/// resumes the job through <see cref="ForeignAwait.ResumeFromPost"/>. Anything else posted here (an
/// awaiter that kept the context for other work) goes to the thread pool, where it would have run
/// without a context: code that is not a job never runs on a runtime's thread.</para>
/// </remarks>
internal sealed class ResumeContext : SynchronizationContext
{
    internal static readonly ResumeContext Instance = new();

    private ResumeContext()
    {
    }

    /// <summary>The context to show while <paramref name="awaiter"/> registers a job on a runtime: this one for a Task awaiter of an asynchronously-continuing task, else null.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static SynchronizationContext? For<TAwaiter>(ref TAwaiter awaiter, PerThread state)
    {
        if (!TaskAwaiterKind<TAwaiter>.IsTaskAwaiter || state.Context is null)
        {
            return null;
        }

        Task? task = Unsafe.As<TAwaiter, Task?>(ref awaiter);
        return task is not null && (task.CreationOptions & TaskCreationOptions.RunContinuationsAsynchronously) != 0 ? Instance : null;
    }

    public override void Post(SendOrPostCallback d, object? state)
    {
        if (state is Action { Target: ForeignAwait foreign } continuation && foreign.IsContinuation(continuation))
        {
            foreign.ResumeFromPost();
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(static s => s.d(s.state), (d, state), preferLocal: false);
        }
    }

    public override SynchronizationContext CreateCopy() => this;
}

/// <summary>
/// Whether <typeparamref name="TAwaiter"/> is <c>TaskAwaiter</c> or <c>TaskAwaiter&lt;T&gt;</c>, whose
/// one field is the awaited task (so that it can be read through a reference to the awaiter).
/// Computed once per awaiter type: the JIT folds the check away for every other awaiter.
/// </summary>
internal static class TaskAwaiterKind<TAwaiter>
{
    internal static readonly bool IsTaskAwaiter = Classify();

    private static bool Classify()
    {
        Type type = typeof(TAwaiter);
        bool taskAwaiter = type == typeof(TaskAwaiter)
            || (type.IsGenericType && type.GetGenericTypeDefinition() == typeof(TaskAwaiter<>));
        return taskAwaiter && Unsafe.SizeOf<TAwaiter>() == IntPtr.Size && RuntimeHelpers.IsReferenceOrContainsReferences<TAwaiter>();
    }
}
