using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>
/// Observes the pending job of every detached spawn of one runtime (one instance per runtime):
/// counts it completed and reports a failure through <see cref="JobRuntime.UnobservedException"/>,
/// exactly as the spawn's own box would have, without keeping a per-job object alive meanwhile.
/// </summary>
internal sealed class DetachedJobObserver(JobRuntime runtime) : CellObserver
{
    internal override void OnCellCompleted(JobCell cell) => runtime.OnDetachedJobCompleted(cell.ConsumeForObserver());
}
