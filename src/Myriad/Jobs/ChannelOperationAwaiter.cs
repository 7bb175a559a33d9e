using System;
using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace Myriad.Jobs;

/// <summary>
/// Recognizes an await on a pending operation of a <c>System.Threading.Channels</c> channel (its
/// <c>ReadAsync</c>, <c>WaitToReadAsync</c>, <c>WriteAsync</c> or <c>WaitToWriteAsync</c>), so that
/// <see cref="ResumeContext"/> can take the job's resume straight from the completing writer or
/// reader instead of through the .NET thread pool.
/// </summary>
/// <remarks>
/// <para><b>Why.</b> A BCL channel resumes a waiting operation asynchronously by default: with no
/// context captured it queues the completion to the thread pool, whose thread then calls the job's
/// continuation, which sends the job to its runtime. Two hops per wake-up; a producer job and a
/// consumer job over <c>Channel.CreateBounded</c> ran 5 to 8 times slower than the same pair of tasks
/// on a loaded 2-core machine. A channel operation that captured a <see cref="System.Threading.SynchronizationContext"/>
/// posts its completion there instead, and <see cref="ResumeContext.Post"/> runs that completion on
/// the posting thread with the job's resume queued, never run inside it: one hop, as for a task.</para>
/// <para><b>Which awaits.</b> The plain awaiters of <c>ValueTask</c>, <c>ValueTask&lt;bool&gt;</c>,
/// <c>ValueTask&lt;int&gt;</c> and <c>ValueTask&lt;long&gt;</c>, whose first word is the source object
/// (checked once per awaiter type on a live sample; any other layout turns the recognition off,
/// which only costs the hop), when that source is one of the channel's operation objects
/// (<c>AsyncOperation&lt;T&gt;</c> and the types derived from it, recognized by name once per type).
/// Any other source is left alone: a source that completes inline without a context (a socket's)
/// would be made to post, a hop more. A <c>ReadAsync</c> of another item type keeps the two hops.</para>
/// </remarks>
internal static class ChannelOperationAwaiter
{
    private static readonly ConcurrentDictionary<Type, bool> s_known = new();

    /// <summary>
    /// Whether <paramref name="awaiter"/> waits for a channel operation. The JIT folds the type test
    /// away for every other awaiter.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool WaitsForOperation<TAwaiter>(ref TAwaiter awaiter) =>
        ValueTaskAwaiterLayout<TAwaiter>.StartsWithSource && Unsafe.As<TAwaiter, object?>(ref awaiter) is { } source && IsOperation(source);

    /// <summary>Whether <paramref name="state"/> is a channel operation object (a completion posted to <see cref="ResumeContext"/>).</summary>
    internal static bool IsOperation(object state) => s_known.GetOrAdd(state.GetType(), static type => Classify(type));

    private static bool Classify(Type? type)
    {
        for (; type is not null; type = type.BaseType)
        {
            if (type.IsGenericType && type.Assembly.GetName().Name == "System.Threading.Channels"
                && type.GetGenericTypeDefinition().FullName == "System.Threading.Channels.AsyncOperation`1")
            {
                return true;
            }
        }

        return false;
    }
}

/// <summary>
/// Whether <typeparamref name="TAwaiter"/> is a plain <c>ValueTask</c> awaiter whose first word is the
/// awaited value task's source object (see <see cref="ChannelOperationAwaiter"/>). Computed once per
/// awaiter type.
/// </summary>
internal static class ValueTaskAwaiterLayout<TAwaiter>
{
    internal static readonly bool StartsWithSource = Classify();

    private static bool Classify()
    {
        Type type = typeof(TAwaiter);
        if (type == typeof(ValueTaskAwaiter))
        {
            Task task = Task.CompletedTask;
            return AwaiterLayout.StartsWith<ValueTaskAwaiter, TAwaiter>(new ValueTask(task).GetAwaiter(), task);
        }

        return type == typeof(ValueTaskAwaiter<bool>) ? StartsWithTask(true)
            : type == typeof(ValueTaskAwaiter<int>) ? StartsWithTask(1)
            : type == typeof(ValueTaskAwaiter<long>) && StartsWithTask(1L);
    }

    /// <summary>Checks the layout on a <c>ValueTaskAwaiter&lt;T&gt;</c> over a completed task (whose first word is that task, as it is the source otherwise).</summary>
    private static bool StartsWithTask<T>(T value)
    {
        Task<T> task = Task.FromResult(value);
        return AwaiterLayout.StartsWith<ValueTaskAwaiter<T>, TAwaiter>(new ValueTask<T>(task).GetAwaiter(), task);
    }
}
