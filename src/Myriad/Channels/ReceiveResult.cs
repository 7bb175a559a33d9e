using System.Runtime.InteropServices;

namespace Myriad.Channels;

/// <summary>
/// The outcome of a receive that reports closure instead of throwing: Go's <c>v, ok := &lt;-ch</c>.
/// <see cref="Ok"/> is false (and <see cref="Value"/> the default) once the channel is closed and
/// drained.
/// </summary>
/// <typeparam name="T">The channel's element type.</typeparam>
[StructLayout(LayoutKind.Auto)]
public readonly struct ReceiveResult<T>
{
    /// <summary>A successful receive of <paramref name="value"/>.</summary>
    public ReceiveResult(T value)
    {
        Value = value;
        Ok = true;
    }

    /// <summary>The item received; the default of <typeparamref name="T"/> when <see cref="Ok"/> is false.</summary>
    public T Value { get; }

    /// <summary>True when an item was received; false when the channel is closed and drained.</summary>
    public bool Ok { get; }

    /// <summary>Deconstructs into <c>(value, ok)</c>: <c>var (v, ok) = await ch.ReceiveOkAsync();</c></summary>
    public void Deconstruct(out T value, out bool ok)
    {
        value = Value;
        ok = Ok;
    }

    /// <inheritdoc/>
    public override string ToString() => Ok ? $"({Value}, true)" : "(closed)";
}
