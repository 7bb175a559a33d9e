using System;

namespace Myriad.Channels;

/// <summary>
/// One channel case of a <see cref="SelectOperation"/>: Go's <c>scase</c> and, while the select waits,
/// its <c>sudog</c> in the channel's queue. Pooled per element type; owned by one select at a time.
/// </summary>
/// <remarks>
/// <para><b>Outcome fields</b> (value, closed, close error, partner) are written by exactly one party:
/// the select itself while it polls under the channel locks, or the party that won the select's commit
/// flag through <see cref="Coordination.IWaiter{T}.TryClaim"/>. They are read by the select's consumer
/// after the select's cell completed, whose completion fence publishes them.</para>
/// </remarks>
internal abstract class SelectCase
{
    /// <summary>The select this case belongs to (for the current use).</summary>
    internal SelectOperation Op = null!;

    /// <summary>This case's index among all the select's cases, in the order they were added.</summary>
    internal int Index;

    /// <summary>The channel: the object whose lock this case takes (two cases on one channel share it).</summary>
    internal abstract object Channel { get; }

    /// <summary>For a receive case, the element type of its channel; null for a send case.</summary>
    internal virtual Type? ReceivedType => null;

    internal abstract void EnterLock();

    /// <summary>Takes the channel's lock if it is free; never waits.</summary>
    internal abstract bool TryEnterLock();

    internal abstract void ExitLock();

    /// <summary>Poll, under the channel's lock: performs the operation if it can complete now (or the channel is closed).</summary>
    internal abstract bool TryPerformLocked();

    /// <summary>After a successful poll, with every lock released: completes the counterpart waiter, then the select.</summary>
    internal abstract void FinishPerform();

    /// <summary>Queues this case in its channel; under the channel's lock.</summary>
    internal abstract void EnqueueLocked();

    /// <summary>Unlinks this case from its channel if it is still queued (takes the channel's lock).</summary>
    internal abstract void Unlink();

    /// <summary>The exception the select throws if this case won, or null (then the handler runs).</summary>
    internal abstract Exception? Failure { get; }

    /// <summary>For the winning case, before the select's cell completes: a receive case leaves its item in the select's <see cref="SelectOperation.ValueSink"/> (see <see cref="SelectBuilder.AsJob{T}"/>).</summary>
    internal virtual void OfferToValueSink()
    {
    }

    /// <summary>For the winning case of a select whose job was abandoned: gives back what it received (see <c>JobCell.GiveBackUnconsumed</c>).</summary>
    internal virtual void GiveBackItem()
    {
    }

    /// <summary>Clears every field of this use (the case then waits as a spare, or in its pool).</summary>
    internal abstract void Clear();

    /// <summary>Returns the (cleared) case to its type's pool.</summary>
    internal abstract void ReturnToPool();

    /// <summary>
    /// For the winning case: copies the handler and the outcome, clears itself, gives itself and the
    /// select back (<see cref="SelectOperation.Recycle(SelectCase, int)"/>), then runs the handler if
    /// the select <paramref name="succeeded"/>.
    /// </summary>
    internal abstract void RecycleThenInvoke(int slot, bool succeeded);
}
