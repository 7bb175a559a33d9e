using System;
using System.Threading;
using System.Threading.Channels;

namespace Myriad.Channels;

/// <summary>
/// A select being described: add cases with <see cref="Receive{T}"/>, <see cref="ReceiveOk{T}"/>,
/// <see cref="Send{T}"/>, <see cref="Default"/> and <see cref="Timeout"/>, then <c>await</c> it. Start one
/// with the methods of <see cref="Select"/>.
/// </summary>
/// <remarks>
/// <para>Awaiting the builder runs the select: the result is the index of the case that fired,
/// counting every case (default and timeout included) in the order they were added, and that case's
/// handler (if any) has run, on the awaiting job, just before the <c>await</c> returns.</para>
/// <para>A builder is a handle to pooled state: always continue from the builder a method returns,
/// and await it exactly once. Using it after it was awaited throws <see cref="InvalidOperationException"/>.</para>
/// <para><b>Allocation.</b> None in steady state when a case is ready (or there is a default), provided
/// the handlers are not fresh closures: pass <c>static</c> lambdas, or delegates created once outside
/// the loop. A select that has to wait with a timeout or a cancellation token allocates its waiting
/// state (its timer entry and token registration too).</para>
/// </remarks>
public readonly struct SelectBuilder
{
    private readonly SelectOperation? _op;
    private readonly short _token;

    private SelectBuilder(SelectOperation op)
    {
        _op = op;
        _token = op.Version;
    }

    /// <summary>Adds a receive case (<c>case v := &lt;-channel</c>); <paramref name="onReceived"/> gets the item.</summary>
    /// <remarks>If this case fires because the channel is closed and drained, the select throws
    /// <see cref="ChannelClosedException"/> (or the close error); use <see cref="ReceiveOk{T}"/> to observe closure instead.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="channel"/> is null.</exception>
    public SelectBuilder Receive<T>(Chan<T> channel, Action<T>? onReceived = null)
    {
        ArgumentNullException.ThrowIfNull(channel);
        SelectOperation op = Op();
        op.AddReceive(channel, onReceived, reportsClose: false);
        return new SelectBuilder(op);
    }

    /// <summary>
    /// Adds a receive case that reports closure (<c>case v, ok := &lt;-channel</c>): a closed, drained
    /// channel makes it fire with <c>Ok = false</c>.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="channel"/> is null.</exception>
    public SelectBuilder ReceiveOk<T>(Chan<T> channel, Action<ReceiveResult<T>>? onReceived = null)
    {
        ArgumentNullException.ThrowIfNull(channel);
        SelectOperation op = Op();
        op.AddReceive(channel, onReceived, reportsClose: true);
        return new SelectBuilder(op);
    }

    /// <summary>
    /// Adds a send case (<c>case channel &lt;- item</c>); <paramref name="onSent"/> runs if it fires. If the
    /// select picks it on a closed channel, the select throws <see cref="ChannelClosedException"/>.
    /// The item is sent only if this case fires.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="channel"/> is null.</exception>
    public SelectBuilder Send<T>(Chan<T> channel, T item, Action? onSent = null)
    {
        ArgumentNullException.ThrowIfNull(channel);
        SelectOperation op = Op();
        op.AddSend(channel, item, onSent);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a default case: if no other case is ready, the select fires this one at once instead of waiting.</summary>
    /// <exception cref="InvalidOperationException">The select already has a default case or a timeout.</exception>
    public SelectBuilder Default(Action? onDefault = null)
    {
        SelectOperation op = Op();
        op.AddDefault(onDefault);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a timeout case: it fires if no other case did within <paramref name="timeout"/>
    /// (<see cref="System.Threading.Timeout.InfiniteTimeSpan"/>: never).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (other than infinite) or longer than about 49.7 days.</exception>
    /// <exception cref="InvalidOperationException">The select already has a timeout or a default case.</exception>
    public SelectBuilder Timeout(TimeSpan timeout, Action? onTimeout = null)
    {
        SelectOperation op = Op();
        op.AddTimeout(timeout, onTimeout);
        return new SelectBuilder(op);
    }

    /// <summary>Makes the select throw <see cref="OperationCanceledException"/> if the token fires before a case does (then no case fired).</summary>
    public SelectBuilder WithCancellation(CancellationToken cancellationToken)
    {
        SelectOperation op = Op();
        op.SetCancellation(cancellationToken);
        return new SelectBuilder(op);
    }

    /// <summary>Runs the select; the job's result is the index of the case that fired. Consumes the builder.</summary>
    /// <exception cref="InvalidOperationException">The select has no case, or the builder was already run.</exception>
    public Job<int> AsJob()
    {
        if (_op is null)
        {
            throw NoCases();
        }

        return _op.Start(_token);
    }

    /// <summary>Runs the select, for <c>await</c>. See <see cref="AsJob"/>.</summary>
    public JobAwaiter<int> GetAwaiter() => AsJob().GetAwaiter();

    private SelectOperation Op()
    {
        if (_op is null)
        {
            return SelectOperation.Rent();
        }

        if (!_op.IsBuilding(_token))
        {
            throw StaleBuilder();
        }

        return _op;
    }

    internal static InvalidOperationException NoCases() => new(
        "A select needs at least one case: add one with Receive, ReceiveOk, Send, Default or Timeout.");

    internal static InvalidOperationException StaleBuilder() => new(
        "This select was already run: a SelectBuilder may be awaited only once, and cases must be added before it is awaited (continue from the builder each method returns).");
}
