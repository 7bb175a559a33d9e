using System.Runtime.InteropServices;

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
/// Where the winning receive case of <typeparamref name="T"/> leaves its item for
/// <see cref="SelectBuilder.AsJob{T}"/>. One per thread is kept for reuse: a select in a loop allocates none.
/// </summary>
internal sealed class SelectValueSink<T>
{
    [System.ThreadStatic] private static SelectValueSink<T>? t_cached;

    internal T Value = default!;
    internal bool Received;

    internal static SelectValueSink<T> Rent()
    {
        SelectValueSink<T>? sink = t_cached;
        t_cached = null;
        return sink ?? new SelectValueSink<T>();
    }

    internal void Set(T value, bool received)
    {
        Value = value;
        Received = received;
    }

    /// <summary>Reads the outcome and returns the sink for reuse.</summary>
    internal SelectResult<T> TakeAndReturn(int index)
    {
        var result = new SelectResult<T>(index, Received, Value);
        Value = default!;
        Received = false;
        t_cached = this;
        return result;
    }
}
