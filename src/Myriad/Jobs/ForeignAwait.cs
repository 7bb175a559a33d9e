using System.Threading;
using Myriad.Internal;
using Myriad.Scheduling;

namespace Myriad.Jobs;

/// <summary>
/// The pair a suspended job must keep while it awaits a Task, a ValueTask or any other non-Myriad
/// awaiter when it has both a non-default ExecutionContext and a runtime to resume on. The box's
/// single <c>_aux</c> slot holds either of the two alone; this pooled object holds both.
/// </summary>
/// <remarks>
/// Lifetime: rented by <see cref="StateMachineBox{TStateMachine, T}"/> at the foreign suspension and
/// parked in its <c>_aux</c>; taken apart and returned by the box's foreign resume, before the box
/// runs, so that nothing holds it once the state machine moves on.
/// </remarks>
internal sealed class ForeignAwait
{
    private static readonly BoxPool<ForeignAwait> s_pool = BoxPool<ForeignAwait>.Shared;

    private ForeignAwait()
    {
    }

    internal ExecutionContext? Context { get; private set; }

    internal JobRuntime? ResumeOn { get; private set; }

    internal static ForeignAwait Rent(PerThread state, ExecutionContext context, JobRuntime resumeOn)
    {
        ForeignAwait pair = s_pool.Rent(state) ?? new ForeignAwait();
        pair.Context = context;
        pair.ResumeOn = resumeOn;
        return pair;
    }

    internal void Return(PerThread state)
    {
        Context = null;
        ResumeOn = null;
        s_pool.Return(state, this);
    }
}
