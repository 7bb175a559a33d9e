using Myriad.Channels;

namespace Myriad.Scheduling;

/// <summary>
/// Everything a run draws at random comes from the seed: which queued item runs next (the runtime's
/// generator, or its <see cref="ScheduleStrategy"/>), the order of timers due at one virtual instant
/// (the clock's generator), and select's choice among ready cases (a select generator owned by the
/// runtime and installed on the driving thread for the length of each drive).
/// </summary>
/// <remarks>
/// Select's generator is per thread (it must cost a few instructions per case on every runtime), so
/// the runtime swaps its own state in when a drive starts and takes it back, with the draws made
/// meanwhile, when the drive ends: a select run by one of its jobs draws from the seed, and nothing
/// outside a drive of a deterministic runtime pays anything for it. Task.Yield, Task continuations
/// and promise completions made on the driving thread go through the runtime's queue, so their
/// order is the queue's, which the seed decides.
/// </remarks>
public sealed partial class DeterministicRuntime
{
    /// <summary>Select's generator state between drives; non-zero.</summary>
    private ulong _selectState;

    /// <summary>The driving thread's own select state, put back when the drive ends.</summary>
    private ulong _callerSelectState;

    private protected override void OnDriveStarted()
    {
        if (_selectState == 0)
        {
            _selectState = SelectRandom.StateFromSeed(Seed);
        }

        _callerSelectState = SelectRandom.Swap(_selectState);
        BeginTracking();
    }

    private protected override void OnDriveEnded()
    {
        EndTracking();
        _selectState = SelectRandom.Swap(_callerSelectState);
    }
}
