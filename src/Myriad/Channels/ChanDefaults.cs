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
    /// Cases up to which a select keeps its scratch arrays (poll order, lock order, lock keys, locks held: 16
    /// bytes a case) on the stack: 64 cases make 1 KiB, and the frame is gone before the select
    /// completes anyone, so nested continuations never stack it up. A select over more channels than
    /// that is rare and pays four small arrays. AppContext key: <c>Myriad.SelectStackCases</c>
    /// (at most 256).
    /// </summary>
    internal static readonly int SelectStackCases = MyriadDefaults.ReadInt("Myriad.SelectStackCases", 64, 0, 256);
}
