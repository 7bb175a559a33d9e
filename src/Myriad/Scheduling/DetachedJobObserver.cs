using System;
using Myriad.Jobs;

namespace Myriad.Scheduling;

/// <summary>
/// Observes the pending job of every detached spawn of one runtime (one instance per runtime):
/// counts it completed and reports a failure through <see cref="JobRuntime.UnobservedException"/>,
/// exactly as the spawn's own box would have, without keeping a per-job object alive meanwhile.
/// A second instance per runtime, with <paramref name="countsSpawn"/> false, observes the jobs handed
/// over by <see cref="JobRuntime.Detach(Myriad.Job)"/>: those were never spawned, so they are not
/// counted as completed spawns.
/// </summary>
internal sealed class DetachedJobObserver(JobRuntime runtime, bool countsSpawn) : CellObserver
{
    internal override void OnCellCompleted(JobCell cell, short token)
    {
        Exception? error = cell.ConsumeForObserver(token);
        if (countsSpawn)
        {
            runtime.OnDetachedJobCompleted(error);
        }
        else
        {
            runtime.ReportDetachedFailure(error);
        }
    }
}
