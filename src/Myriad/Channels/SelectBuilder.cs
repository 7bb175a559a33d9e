using System;
using System.Threading;
using System.Threading.Channels;

namespace Myriad.Channels;

/// <summary>
/// A select being described: add cases with <c>Receive</c>, <c>ReceiveOk</c>,
/// <c>Send</c>, <see cref="Default"/> and <see cref="Timeout"/>, then <c>await</c> it. Start one
/// with the methods of <see cref="Select"/>.
/// </summary>
/// <remarks>
/// <para>Awaiting the builder runs the select: the result is the index of the case that fired,
/// counting every case (default and timeout included) in the order they were added, and that case's
/// handler (if any) has run, on the awaiting job, just before the <c>await</c> returns.</para>
/// <para>A builder is a handle to pooled state: always continue from the builder a method returns,
/// and await it exactly once. Using it after it was awaited throws <see cref="InvalidOperationException"/>,
/// and so does using an older copy after a case was added through a newer one (copies of a struct
/// share the select, so the older copy would otherwise run cases it never saw).</para>
/// <para><b>Handlers</b> are synchronous and run on the awaiting job just before the <c>await</c>
/// returns. The state-passing overloads (<c>static (state, value) =&gt; ...</c>) need no closure. To
/// <c>await</c> in reaction to a case, leave the handlers out and use the index, or
/// <see cref="AsJob{T}"/>, which also returns the item received.</para>
/// <para><b>Allocation.</b> None in steady state when a case is ready (or there is a default), provided
/// the handlers are not fresh closures: pass <c>static</c> lambdas, or delegates created once outside
/// the loop. A select that has to wait with a timeout or a cancellation token allocates its waiting
/// state (its timer entry and token registration too).</para>
/// </remarks>
public readonly struct SelectBuilder
{
    private readonly SelectOperation? _op;
    private readonly short _token;
    private readonly int _stamp;

    private SelectBuilder(SelectOperation op)
    {
        _op = op;
        _token = op.Version;
        _stamp = op.Stamp;
    }

    /// <summary>Adds a receive case (<c>case v := &lt;-channel</c>). A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires.</summary>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder Receive<T>(Chan<T>? channel, Action<T>? onReceived = null)
    {
        SelectOperation op = Op();
        op.AddReceive(channel, default(NoState), onReceived, reportsClose: false);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a receive case (<c>case v := &lt;-channel</c>). A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires. The handler gets <paramref name="state"/> first: with a <c>static</c> lambda the case captures nothing (the state is stored typed, without boxing).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="onReceived"/> is null.</exception>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder Receive<TState, T>(Chan<T>? channel, TState state, Action<TState, T> onReceived)
    {
        ArgumentNullException.ThrowIfNull(onReceived);
        SelectOperation op = Op();
        op.AddReceive(channel, state, onReceived, reportsClose: false);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a receive case (<c>case v := &lt;-channel</c>). A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires.</summary>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder Receive<T>(ReceiveOnlyChan<T> channel, Action<T>? onReceived = null)
    {
        SelectOperation op = Op();
        op.AddReceive(channel.Channel, default(NoState), onReceived, reportsClose: false);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a receive case (<c>case v := &lt;-channel</c>). A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires. The handler gets <paramref name="state"/> first: with a <c>static</c> lambda the case captures nothing (the state is stored typed, without boxing).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="onReceived"/> is null.</exception>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder Receive<TState, T>(ReceiveOnlyChan<T> channel, TState state, Action<TState, T> onReceived)
    {
        ArgumentNullException.ThrowIfNull(onReceived);
        SelectOperation op = Op();
        op.AddReceive(channel.Channel, state, onReceived, reportsClose: false);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a receive case that reports closure (<c>case v, ok := &lt;-channel</c>): a closed, drained channel makes it fire with <c>Ok = false</c>. A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires.</summary>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder ReceiveOk<T>(Chan<T>? channel, Action<ReceiveResult<T>>? onReceived = null)
    {
        SelectOperation op = Op();
        op.AddReceive(channel, default(NoState), onReceived, reportsClose: true);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a receive case that reports closure (<c>case v, ok := &lt;-channel</c>): a closed, drained channel makes it fire with <c>Ok = false</c>. A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires. The handler gets <paramref name="state"/> first: with a <c>static</c> lambda the case captures nothing (the state is stored typed, without boxing).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="onReceived"/> is null.</exception>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder ReceiveOk<TState, T>(Chan<T>? channel, TState state, Action<TState, ReceiveResult<T>> onReceived)
    {
        ArgumentNullException.ThrowIfNull(onReceived);
        SelectOperation op = Op();
        op.AddReceive(channel, state, onReceived, reportsClose: true);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a receive case that reports closure (<c>case v, ok := &lt;-channel</c>): a closed, drained channel makes it fire with <c>Ok = false</c>. A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires.</summary>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder ReceiveOk<T>(ReceiveOnlyChan<T> channel, Action<ReceiveResult<T>>? onReceived = null)
    {
        SelectOperation op = Op();
        op.AddReceive(channel.Channel, default(NoState), onReceived, reportsClose: true);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a receive case that reports closure (<c>case v, ok := &lt;-channel</c>): a closed, drained channel makes it fire with <c>Ok = false</c>. A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires. The handler gets <paramref name="state"/> first: with a <c>static</c> lambda the case captures nothing (the state is stored typed, without boxing).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="onReceived"/> is null.</exception>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder ReceiveOk<TState, T>(ReceiveOnlyChan<T> channel, TState state, Action<TState, ReceiveResult<T>> onReceived)
    {
        ArgumentNullException.ThrowIfNull(onReceived);
        SelectOperation op = Op();
        op.AddReceive(channel.Channel, state, onReceived, reportsClose: true);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a send case (<c>case channel &lt;- item</c>); the item is sent only if this case fires. A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires.</summary>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder Send<T>(Chan<T>? channel, T item, Action? onSent = null)
    {
        SelectOperation op = Op();
        op.AddSend(channel, item, default(NoState), onSent);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a send case (<c>case channel &lt;- item</c>); the item is sent only if this case fires. A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires. The handler gets <paramref name="state"/> first: with a <c>static</c> lambda the case captures nothing (the state is stored typed, without boxing).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="onSent"/> is null.</exception>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder Send<TState, T>(Chan<T>? channel, T item, TState state, Action<TState> onSent)
    {
        ArgumentNullException.ThrowIfNull(onSent);
        SelectOperation op = Op();
        op.AddSend(channel, item, state, onSent);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a send case (<c>case channel &lt;- item</c>); the item is sent only if this case fires. A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires.</summary>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder Send<T>(SendOnlyChan<T> channel, T item, Action? onSent = null)
    {
        SelectOperation op = Op();
        op.AddSend(channel.Channel, item, default(NoState), onSent);
        return new SelectBuilder(op);
    }

    /// <summary>Adds a send case (<c>case channel &lt;- item</c>); the item is sent only if this case fires. A null channel (or a view without one) disables the case, as a nil channel does in Go: it keeps its index and never fires. The handler gets <paramref name="state"/> first: with a <c>static</c> lambda the case captures nothing (the state is stored typed, without boxing).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="onSent"/> is null.</exception>
    /// <exception cref="InvalidOperationException">This builder was already awaited, or is an older copy of a builder that was changed since.</exception>
    public SelectBuilder Send<TState, T>(SendOnlyChan<T> channel, T item, TState state, Action<TState> onSent)
    {
        ArgumentNullException.ThrowIfNull(onSent);
        SelectOperation op = Op();
        op.AddSend(channel.Channel, item, state, onSent);
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
    /// (<see cref="System.Threading.Timeout.InfiniteTimeSpan"/>: never; <see cref="TimeSpan.Zero"/>: at
    /// once if no case is ready, as a default case would, and as <c>Job.Delay(TimeSpan.Zero)</c> completes at once).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (other than infinite) or longer than about 49.7 days.</exception>
    /// <exception cref="InvalidOperationException">The select already has a timeout or a default case.</exception>
    public SelectBuilder Timeout(TimeSpan timeout, Action? onTimeout = null)
    {
        SelectOperation op = Op();
        op.AddTimeout(timeout, onTimeout);
        return new SelectBuilder(op);
    }

    /// <summary>Makes the select throw <see cref="OperationCanceledException"/> if the token fires before a case does (then no case fired).</summary>
    /// <exception cref="InvalidOperationException">The select already has a cancellation token (link the two instead).</exception>
    public SelectBuilder WithCancellation(CancellationToken cancellationToken)
    {
        SelectOperation op = Op();
        op.SetCancellation(cancellationToken);
        return new SelectBuilder(op);
    }

    /// <summary>Runs the select; the job's result is the index of the case that fired. Consumes the builder.</summary>
    /// <exception cref="InvalidOperationException">The select has no case; every case's channel is null
    /// and there is neither a default, a timeout nor a cancellation (it would wait forever); or the builder
    /// was already run, or is an older copy.</exception>
    public Job<int> AsJob()
    {
        if (_op is null)
        {
            throw NoCases();
        }

        if (!_op.IsLatest(_token, _stamp))
        {
            throw StaleBuilder();
        }

        return _op.Start(_token);
    }

    /// <summary>
    /// Runs the select; the result tells which case fired and, when it was a receive case on a channel
    /// of <typeparamref name="T"/>, the item received. Handlers still run as usual. Consumes the builder.
    /// </summary>
    /// <example>
    /// <code>
    /// var (fired, line) = await Select.Receive(lines).Receive(quit).AsJob&lt;string&gt;();
    /// if (fired == 0) await output.SendAsync(line);   // code after a select may await
    /// </code>
    /// </example>
    /// <remarks>
    /// <typeparamref name="T"/> is the element type of a channel the select receives from, for
    /// <c>ReceiveOk</c> cases too (whose closure shows in <see cref="SelectResult{T}.Received"/>, so
    /// <c>AsJob&lt;long&gt;</c>, not <c>AsJob&lt;ReceiveResult&lt;long&gt;&gt;</c>). Items received
    /// by cases on channels of other types are not returned (a signal channel beside the data channel).
    /// </remarks>
    /// <exception cref="InvalidOperationException">As for <see cref="AsJob()"/>; or the select has receive
    /// cases and none of them receives <typeparamref name="T"/> (every item it received would be lost).</exception>
    public Job<SelectResult<T>> AsJob<T>()
    {
        if (_op is null)
        {
            throw NoCases();
        }

        if (!_op.IsLatest(_token, _stamp))
        {
            throw StaleBuilder();
        }

        if (_op.ReceivesOnlyOtherTypesThan(typeof(T)))
        {
            throw MismatchedResultType(typeof(T));
        }

        return SelectValueSink<T>.Start(_op, _token);
    }

    private static InvalidOperationException MismatchedResultType(Type type)
    {
        string name = Diagnostics.CompilerNames.DescribeType(type);
        return new InvalidOperationException($"AsJob<{name}>() on a select none of whose receive cases receives {name}: the item a case received could not be returned and would be lost. Use the element type of the channel, for ReceiveOk cases too (AsJob<long>() for a Chan<long>; SelectResult.Received tells a closed channel).");
    }

    /// <summary>Runs the select, for <c>await</c>. See <see cref="AsJob"/>.</summary>
    public JobAwaiter<int> GetAwaiter() => AsJob().GetAwaiter();

    private SelectOperation Op()
    {
        if (_op is null)
        {
            return SelectOperation.Rent();
        }

        if (!_op.IsLatest(_token, _stamp))
        {
            throw StaleBuilder();
        }

        return _op;
    }

    internal static InvalidOperationException NoCases() => new(
        "A select needs at least one case: add one with Receive, ReceiveOk, Send, Default or Timeout.");

    internal static InvalidOperationException StaleBuilder() => new(
        "This SelectBuilder is stale: it was already run, or it is an older copy of a builder that was changed since (continue from the builder each method returns, await it once, and add cases before awaiting).");

    internal static InvalidOperationException WaitsForever() => new(
        "Every case of this select has a null channel and it has no default, no finite timeout and no cancelable token: it would wait forever.");
}
