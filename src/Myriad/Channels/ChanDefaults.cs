using Myriad.Internal;

namespace Myriad.Channels;

/// <summary>
/// Tuning constants of channels and select, each overridable through an AppContext setting (see
/// <see cref="MyriadDefaults"/> for how).
/// </summary>
internal static class ChanDefaults
{
    /// <summary>
    /// Slots a buffered channel's ring starts with (rounded up to a power of two, and never more than
    /// the channel's capacity); the ring doubles as items accumulate. 16 slots (128 bytes of
    /// references) cover the small capacities Go programs typically use without a regrowth, while a
    /// million-slot bounded channel that never fills up does not pay for its capacity up front (the
    /// BCL's bounded channel likewise grows a deque). AppContext key: <c>Myriad.ChanInitialRing</c>.
    /// </summary>
    internal static readonly int InitialRingSize = MyriadDefaults.ReadInt("Myriad.ChanInitialRing", 16, 1, 1 << 20);

    /// <summary>
    /// Cases up to which a select keeps its scratch arrays (poll order, lock order) on the stack.
    /// 2 x 4 bytes x 64 = 512 bytes of stack, far below anything the trampoline lets nest; a select
    /// over more channels than that is rare and pays one small array. AppContext key:
    /// <c>Myriad.SelectStackCases</c>.
    /// </summary>
    internal static readonly int SelectStackCases = MyriadDefaults.ReadInt("Myriad.SelectStackCases", 64, 0, 1024);
}
