namespace Myriad.Jobs;

/// <summary>
/// A continuation that is told which cell completed, so that one shared instance can observe any
/// number of cells. Registered like any continuation (<see cref="JobCell.OnCompleted(object, short)"/>); the
/// completing thread calls <see cref="OnCellCompleted"/> inline instead of dispatching it through
/// the trampoline, so an implementation must be short, must not throw, and must not run user code
/// that can nest (an event it raises must be guarded, as <see cref="Scheduling.JobRuntime.RaiseUnobservedException"/> is).
/// </summary>
/// <remarks>
/// Exists for detached spawns: a million fire-and-forget jobs, each suspended on something, would
/// otherwise keep a million per-job objects alive only to report a failure nobody awaits. Also
/// consumes <c>Job.WhenAny</c>'s per-job observer jobs, which need no runtime.
/// </remarks>
internal abstract class CellObserver
{
    /// <summary>
    /// Called once, after <paramref name="cell"/> completed, with the token of the use the observer
    /// was registered on. Must consume its outcome (see <see cref="JobCell.ConsumeForObserver"/>).
    /// </summary>
    internal abstract void OnCellCompleted(JobCell cell, short token);

    /// <summary>
    /// Whether <see cref="OnCellCompleted"/> completes another cell (a race's promise), whose own
    /// continuation may be another such observer: a chain of them (<c>job.WaitAsync(t).WaitAsync(t)...</c>)
    /// would nest one call per link. Such observers are called through the trampoline's depth
    /// counter, and deferred at its limit, like any continuation; the others cost one field load.
    /// </summary>
    internal readonly bool CompletesOtherCells;

    /// <summary>An observer that completes no other cell (see <see cref="CompletesOtherCells"/>).</summary>
    private protected CellObserver()
    {
    }

    /// <summary>An observer that may complete other cells: <paramref name="completesOtherCells"/> true (see <see cref="CompletesOtherCells"/>).</summary>
    private protected CellObserver(bool completesOtherCells) => CompletesOtherCells = completesOtherCells;
}
