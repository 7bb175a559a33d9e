using System;
using System.Runtime.InteropServices;
using Myriad.Internal;
using Myriad.Jobs;

namespace Myriad.Channels;

/// <summary>
/// What <see cref="SelectBuilder.AsJob{T}"/> returns: which case fired and, when it was a receive case
/// on a channel of <typeparamref name="T"/>, the item it received. Code after the select can then
/// <c>await</c>, which a handler (a synchronous delegate) cannot.
/// </summary>
/// <typeparam name="T">The element type of the receive cases whose item is wanted.</typeparam>
[StructLayout(LayoutKind.Auto)]
public readonly struct SelectResult<T>
{
    internal SelectResult(int index, bool received, T value)
    {
        Index = index;
        Received = received;
        Value = value;
    }

    /// <summary>The index of the case that fired, counting every case in the order it was added.</summary>
    public int Index { get; }

    /// <summary>True when a receive case of <typeparamref name="T"/> fired with an item; false for any
    /// other case, and for a <c>ReceiveOk</c> case that found its channel closed.</summary>
    public bool Received { get; }

    /// <summary>The item received when <see cref="Received"/> is true; the default otherwise.</summary>
    public T Value { get; }

    /// <summary>Deconstructs into <c>(index, value)</c>: <c>var (fired, item) = await select.AsJob&lt;int&gt;();</c></summary>
    public void Deconstruct(out int index, out T value)
    {
        index = Index;
        value = Value;
    }
}

/// <summary>
/// The job <see cref="SelectBuilder.AsJob{T}"/> returns, and where the winning receive case of
/// <typeparamref name="T"/> leaves its item. Its outcome is known once the select completed, but the
/// select is consumed (the winning handler runs) only when this job's outcome is consumed: the handler
/// runs where <see cref="SelectBuilder.AsJob()"/> and <c>await</c> run it, on the awaiting code just
/// before the await returns, and a handler that throws throws there.
/// </summary>
/// <remarks>
/// <para><b>Life of one use.</b>
/// 1. <see cref="Start"/> rents the cell (a thread keeps its last one: a select in a loop allocates
///    none), makes it the select's <see cref="SelectOperation.ValueSink"/> and starts the select.
/// 2. The winning receive case of <typeparamref name="T"/> leaves its item here (<see cref="Set"/>,
///    from <see cref="SelectOperation.Resolve"/>), before the select's cell completes.
/// 3. Once the select's cell completed (at once in <see cref="Start"/>, or later in <see cref="Execute"/>:
///    this cell is then its one continuation), this cell completes with the index (the select's
///    winner, read without consuming it), the item and whether one was received. A select that failed
///    (canceled, or a channel closed with an error) runs no handler: it is consumed here and this cell
///    fails with its exception.
/// 4. The consumer of this cell's outcome releases it (<see cref="Release"/>): the cell is reset and
///    kept for reuse first, then the select is consumed, which runs the handler; an exception of the
///    handler leaves the consumer's <c>GetResult</c>, as a select's own does.</para>
/// <para><b>After a runtime's disposal.</b> The job that awaits this cell does not await the select, so,
/// as <see cref="ChanRange{T}"/> does, step 1 records the runtime of the thread that starts a select
/// that must wait as this cell's owner, which the hand-off's claim-time check reads
/// (<c>JobCell.ConsumerCannotRun</c>); and a job abandoned with this cell completed gives back what the
/// select received (<see cref="GiveBackUnconsumed"/>).</para>
/// </remarks>
internal sealed class SelectValueSink<T> : SourceBox<SelectResult<T>>
{
    [System.ThreadStatic] private static SelectValueSink<T>? t_cached;

    private Job<int> _select;
    private T _value = default!;
    private bool _received;

    /// <summary>Steps 1 and 3: runs the select built in <paramref name="op"/> (its builder checked the token).</summary>
    internal static Job<SelectResult<T>> Start(SelectOperation op, short token)
    {
        SelectValueSink<T> cell = t_cached ?? new SelectValueSink<T>();
        t_cached = null;
        op.ValueSink = cell;
        Job<int> select;
        try
        {
            select = op.Start(token);
        }
        catch
        {
            op.ValueSink = null;
            t_cached = cell;
            throw;
        }

        short version = cell.Version;
        cell._select = select;
        if (select.IsCompleted)
        {
            cell.OnSelectCompleted(null);
        }
        else
        {
            cell._ownerRuntime = Scheduling.SchedulerContext.RuntimeIdOf(PerThread.Current); // see "After a runtime's disposal"
            select._box!.OnCompleted(cell, select._token); // step 3 runs here if the select completed meanwhile
        }

        return new Job<SelectResult<T>>(cell, version);
    }

    /// <summary>Step 2.</summary>
    internal void Set(T value, bool received)
    {
        _value = value;
        _received = received;
    }

    /// <summary>Step 3, when the select completed after <see cref="Start"/>.</summary>
    internal override void Execute(PerThread state) => OnSelectCompleted(state);

    private void OnSelectCompleted(PerThread? state)
    {
        Job<int> select = _select;
        var op = (SelectOperation)select._box!;
        if (op.ErrorUnchecked is null)
        {
            TrySetResult(new SelectResult<T>(op.Winner, _received, _value), state);
            return;
        }

        _select = default;
        try
        {
            select.GetAwaiter().GetResult(); // consumes the failed select: no handler runs
        }
        catch (Exception error)
        {
            TrySetException(error, state);
        }
    }

    /// <summary>Consuming the result consumes the select, which runs the winning handler.</summary>
    internal override bool ConsumingRunsUserCode => true;

    /// <summary>Step 4.</summary>
    private protected override void Release()
    {
        Job<int> select = _select;
        _select = default;
        _value = default!;
        _received = false;
        _ownerRuntime = 0;
        ResetBox();
        t_cached = this;
        if (select._box is not null)
        {
            select.GetAwaiter().GetResult(); // runs the handler; a throwing one throws from here
        }
    }

    /// <summary>The job awaiting this cell was abandoned after the select completed: what it received goes back.</summary>
    internal override void GiveBackUnconsumed()
    {
        if (ErrorUnchecked is null && _select._box is { } select)
        {
            select.GiveBackUnconsumed();
        }
    }

    // Completed from the select's own completion, which another side's call runs (see SelectOperation).
    private protected override bool ResumesForeignWaitersAsynchronously => true;

    internal override string Describe() => $"Select.AsJob<{Diagnostics.CompilerNames.DescribeType(typeof(T))}>()";

    // Diagnostics only, a racy read: the select is what this job still waits for.
    internal override JobCell? AwaitedCell() => IsCompletedUnchecked ? null : _select._box;
}
