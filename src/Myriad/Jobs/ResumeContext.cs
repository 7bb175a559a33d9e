using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>
/// The <see cref="SynchronizationContext"/> a job on a runtime shows to the awaiter of a task, while
/// the awaiter registers and only then: for a task that runs its continuations asynchronously
/// (<see cref="TaskCreationOptions.RunContinuationsAsynchronously"/>, the usual
/// <see cref="TaskCompletionSource{TResult}"/>) and for a <c>Task.Delay</c> with a token, on every
/// runtime, and for every task on a deterministic runtime.
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
/// <para><b>A <c>Task.Delay</c> ended by its token</b> continues on the thread pool too, so it is
/// shown this context on every runtime: a job whose delay's token was canceled just before the
/// runtime's disposal was otherwise abandoned when the pool delivered its resume after the drain,
/// its <c>finally</c> blocks not run (6 to 62 of 200 tries of fifty such jobs). With the context the
/// resume is queued before <c>Cancel</c> returns. The task is recognized by its BCL type.</para>
/// <para><b>Deterministic runtimes.</b> Other tasks send continuations to the thread pool too: all
/// but the first when several jobs await one task, and a <c>Task.Delay</c> ended by its token.
/// Those resumes reached a deterministic runtime whenever real time delivered them (three orders in
/// twenty runs of one seed for four jobs awaiting one <see cref="TaskCompletionSource{TResult}"/>,
/// and timeouts on the virtual clock seen a virtual second late). There every task's awaiter is
/// shown this context, so the TPL posts each resume from the thread that completes the task, the
/// driving thread when a job or the virtual clock completes it, and the seed orders the resumes.
/// Elsewhere only the first kind is: with any other task the TPL usually runs the continuation
/// inline on the completing thread, and capturing a context would cost an allocation per await
/// (48 bytes, the TPL's continuation for a captured context), turn a resume inline on the
/// completing thread into a queued one (a job that completes a task and then blocks on code
/// behind the await deadlocked a current-thread runtime), and send resumes posted during a
/// disposal's drain to the thread pool, past the drain (see <see cref="ForeignAwait.ResumeFromPost"/>).</para>
/// <para><b>Which awaiters.</b> <c>TaskAwaiter</c> and <c>TaskAwaiter&lt;T&gt;</c> (a plain
/// <c>await task</c>), and the awaiters of <c>task.ConfigureAwait(...)</c>: a job never resumes on
/// a captured context anyway, so when this context is shown, the builder registers a configured
/// await through the task's plain awaiter, which captures it (the configured awaiter would not, and
/// <c>ConfigureAwait(false)</c> out of habit would take the resume back to the thread pool). The task
/// is read from the awaiter, a struct whose first field it is (<see cref="TaskAwaiterKind{TAwaiter}"/>
/// checks that once per awaiter type).</para>
/// <para><b>Channel operations.</b> The same context is shown to the plain awaiter of a pending
/// <c>System.Threading.Channels</c> operation (see <see cref="ChannelOperationAwaiter"/>): such an
/// operation resumes asynchronously through the thread pool unless it captured a context.</para>
/// <para><b>Post</b> recognizes the TPL's call (its state is the job's continuation delegate) and
/// resumes the job through <see cref="ForeignAwait.ResumeFromPost"/>; a channel operation's
/// completion runs on the posting thread with the job's resume queued (the operation's own code,
/// which only calls the continuation the job registered). Anything else posted here (an
/// awaiter that kept the context for other work) goes to the thread pool, where it would have run
/// without a context: code that is not a job never runs on a runtime's thread.</para>
/// </remarks>
internal sealed class ResumeContext : SynchronizationContext
{
    internal static readonly ResumeContext Instance = new();

    private ResumeContext()
    {
    }

    /// <summary>
    /// The context to show while <paramref name="awaiter"/> registers a job on a runtime: this one
    /// for a task awaiter of an asynchronously-continuing task, or of any task on a context that
    /// queues resumes (a deterministic runtime's driver, a lent thread); else null.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static SynchronizationContext? For<TAwaiter>(ref TAwaiter awaiter, PerThread state)
    {
        if ((!TaskAwaiterKind<TAwaiter>.HoldsTask && !ValueTaskAwaiterLayout<TAwaiter>.StartsWithSource) || state.Context is not { } context)
        {
            return null;
        }

        if (!TaskAwaiterKind<TAwaiter>.HoldsTask)
        {
            return ChannelOperationAwaiter.WaitsForOperation(ref awaiter) ? Instance : null;
        }

        Task? task = Unsafe.As<TAwaiter, Task?>(ref awaiter);
        return task is not null && (context.QueuesResumes || (task.CreationOptions & TaskCreationOptions.RunContinuationsAsynchronously) != 0 || task.GetType() == s_delayWithCancellation) ? Instance : null;
    }

    /// <summary>
    /// The type of <c>Task.Delay(delay, token)</c>'s task with a token that can be canceled, whose
    /// cancellation the TPL continues on the thread pool (see the remarks). Null if a later BCL has
    /// no such type: those delays then resume as other tasks do.
    /// </summary>
    private static readonly Type? s_delayWithCancellation = typeof(Task).GetNestedType("DelayPromiseWithCancellation", System.Reflection.BindingFlags.NonPublic);

    /// <summary>
    /// Registers <paramref name="continuation"/> on <paramref name="awaiter"/>. With this context
    /// <paramref name="shown"/> (<see cref="For"/> returned it), a configured awaiter, which would not
    /// capture the context, is bypassed for the task's plain one.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Register<TAwaiter>(ref TAwaiter awaiter, Action continuation, bool shown)
        where TAwaiter : ICriticalNotifyCompletion
    {
        if (shown && TaskAwaiterKind<TAwaiter>.IsConfigured)
        {
            Unsafe.As<TAwaiter, Task>(ref awaiter).GetAwaiter().UnsafeOnCompleted(continuation);
        }
        else
        {
            awaiter.UnsafeOnCompleted(continuation);
        }
    }

    public override void Post(SendOrPostCallback d, object? state)
    {
        if (state is Action { Target: ForeignAwait foreign } continuation && foreign.IsContinuation(continuation))
        {
            foreign.ResumeFromPost();
        }
        else if (state is Tuple<Action<object?>, object?> call && ForeignAwait.OfValueTaskContinuation(call.Item1, call.Item2) is { } raced)
        {
            // A channel operation that completed while the job registered on it posts the awaiter's
            // own call: the invoker and the job's continuation.
            raced.ResumeFromPost();
        }
        else if (state is not null && ChannelOperationAwaiter.IsOperation(state))
        {
            // A channel operation's completion (only a job's registration showed it this context):
            // BCL code that calls the job's continuation, which queues the job rather than running it.
            RunQueueingResumes(d, state);
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(static s => s.d(s.state), (d, state), preferLocal: false);
        }
    }

    /// <summary>
    /// Runs <paramref name="d"/> on this thread with every job resume it makes queued on the job's
    /// runtime (<see cref="PerThread.QueuesForeignResumes"/>), never run inside the post: the poster
    /// asked for an asynchronous continuation, and may be a thread of another runtime or of none.
    /// </summary>
    private static void RunQueueingResumes(SendOrPostCallback d, object state)
    {
        PerThread thread = PerThread.Current;
        bool previous = thread.QueuesForeignResumes;
        thread.QueuesForeignResumes = true;
        try
        {
            d(state);
        }
        finally
        {
            thread.QueuesForeignResumes = previous;
        }
    }

    public override SynchronizationContext CreateCopy() => this;
}

/// <summary>
/// Whether <typeparamref name="TAwaiter"/> is a task awaiter whose first field is the awaited task,
/// so that it can be read through a reference to the awaiter: <c>TaskAwaiter</c> and
/// <c>TaskAwaiter&lt;T&gt;</c> (their one field), and the configured awaiters of
/// <c>ConfigureAwait</c> (the task and the options; the layout is checked on a live awaiter, and an
/// unexpected one turns the recognition off, which only costs the thread-pool hop).
/// Computed once per awaiter type: the JIT folds the checks away for every other awaiter.
/// </summary>
internal static class TaskAwaiterKind<TAwaiter>
{
    /// <summary>A <c>ConfigureAwait</c> awaiter whose first field is its task.</summary>
    internal static readonly bool IsConfigured = ClassifyConfigured();

    /// <summary>The awaiter's first field is the task it awaits (a plain or a configured task awaiter).</summary>
    internal static readonly bool HoldsTask = IsConfigured || ClassifyPlain();

    private static bool ClassifyPlain()
    {
        Type type = typeof(TAwaiter);
        bool taskAwaiter = type == typeof(TaskAwaiter)
            || (type.IsGenericType && type.GetGenericTypeDefinition() == typeof(TaskAwaiter<>));
        return taskAwaiter && Unsafe.SizeOf<TAwaiter>() == IntPtr.Size && RuntimeHelpers.IsReferenceOrContainsReferences<TAwaiter>();
    }

    private static bool ClassifyConfigured()
    {
        Type type = typeof(TAwaiter);
        if (type == typeof(ConfiguredTaskAwaitable.ConfiguredTaskAwaiter))
        {
            Task task = Task.CompletedTask;
            return AwaiterLayout.StartsWith<ConfiguredTaskAwaitable.ConfiguredTaskAwaiter, TAwaiter>(task.ConfigureAwait(true).GetAwaiter(), task);
        }

        if (type.IsGenericType && type.GetGenericTypeDefinition() == typeof(ConfiguredTaskAwaitable<>.ConfiguredTaskAwaiter))
        {
            // The generic struct's layout does not depend on its argument (a task and the options).
            Task<object?> task = Task.FromResult<object?>(null);
            return AwaiterLayout.StartsWith<ConfiguredTaskAwaitable<object?>.ConfiguredTaskAwaiter, TAwaiter>(task.ConfigureAwait(true).GetAwaiter(), task);
        }

        return false;
    }
}

/// <summary>Layout checks of BCL awaiter structs, read through a reference to the awaiter.</summary>
internal static class AwaiterLayout
{
    /// <summary>
    /// Whether <paramref name="sample"/> (an awaiter of the same layout as <typeparamref name="TAwaiter"/>)
    /// starts with a reference to <paramref name="target"/>: the first word is compared as a number
    /// with the target's address, never read as a reference (were another field first, that word
    /// would be no object). A collection moving the target between the two reads can only make the
    /// answer false, so a false one is checked again: the answer is kept for the process.
    /// </summary>
    internal static bool StartsWith<TSample, TAwaiter>(TSample sample, object target)
        where TSample : struct
    {
        if (Unsafe.SizeOf<TSample>() != Unsafe.SizeOf<TAwaiter>() || !RuntimeHelpers.IsReferenceOrContainsReferences<TSample>())
        {
            return false;
        }

        for (int attempt = 0; attempt < 3; attempt++)
        {
            nint first = Unsafe.As<TSample, nint>(ref sample);
            nint address = Unsafe.As<object, nint>(ref target);
            if (first == address)
            {
                return true;
            }
        }

        return false;
    }
}
