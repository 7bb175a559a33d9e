using Myriad.Internal;

namespace Myriad.Channels;

/// <summary>
/// Tuning constants of channels and select, each overridable through an AppContext setting (see
/// <see cref="MyriadDefaults"/> for how).
/// </summary>
internal static class ChanDefaults
{
    /// <summary>
    /// Slots a buffered channel's ring starts with (the smaller of this and the channel's capacity,
    /// rounded up to a power of two); the ring's array doubles as items accumulate, while the number
    /// of items it holds never exceeds the capacity. 16 slots (128 bytes of
    /// references) cover the small capacities Go programs typically use without a regrowth, while a
    /// million-slot bounded channel that never fills up does not pay for its capacity up front (the
    /// BCL's bounded channel likewise grows a deque). AppContext key: <c>Myriad.ChanInitialRing</c>.
    /// </summary>
    internal static readonly int InitialRingSize = MyriadDefaults.ReadInt("Myriad.ChanInitialRing", 16, 1, 1 << 20);

    /// <summary>
    /// Slots a ring keeps when it empties; a larger array is released then, and the next item starts
    /// a ring of <see cref="InitialRingSize"/> again. Without it, one burst of millions of items
    /// through an unbounded channel pinned its peak array (16 MiB of references after 2M items) for
    /// the channel's lifetime; the BCL's unbounded channel gives its segments back as they drain.
    /// 1024 slots (8 KiB of references) keep a channel whose backlog stays in the hundreds from
    /// regrowing after each time it runs dry. AppContext key: <c>Myriad.ChanRetainedRing</c>.
    /// </summary>
    internal static readonly int RetainedRingSize = MyriadDefaults.ReadInt("Myriad.ChanRetainedRing", 1024, 1, int.MaxValue);

    /// <summary>
    /// Cases up to which a select keeps its scratch arrays (poll order, lock order, lock keys, locks held: 16
    /// bytes a case) on the stack: 64 cases make 1 KiB, and the frame is gone before the select
    /// completes anyone, so nested continuations never stack it up. A select over more channels than
    /// that is rare and pays four small arrays. AppContext key: <c>Myriad.SelectStackCases</c>
    /// (at most 256).
    /// </summary>
    internal static readonly int SelectStackCases = MyriadDefaults.ReadInt("Myriad.SelectStackCases", 64, 0, 256);
}
