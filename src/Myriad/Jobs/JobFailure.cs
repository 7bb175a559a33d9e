using System;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using Myriad.Internal;

namespace Myriad.Jobs;

/// <summary>
/// A failed job's outcome as its cell keeps it (in <c>_aux</c>): the captured exception, and how many
/// jobs it has already crossed in the current propagation.
/// </summary>
/// <remarks>
/// <para><b>Why levels are counted.</b> Every await that rethrows a failure appends the frames
/// between the rethrow and the next catch to the exception's stack trace, and every capture copies
/// the whole trace so far. A failure that crosses <c>n</c> jobs (an async recursion <c>n</c> deep,
/// a chain of <c>n</c> awaits) therefore copies traces of 1, 2, ..., n levels: quadratic time,
/// several seconds for 20,000 levels on .NET 10 and practically a hang for 100,000. The BCL's <c>async Task</c> pays the same, but overflows the stack
/// long before; Myriad's trampoline reaches millions of levels, so the failure must cross them in
/// linear time.</para>
/// <para><b>Protocol.</b>
/// 1. A cell fails: <see cref="Capture"/> looks at what this thread last rethrew out of a job
///    (<see cref="PerThread.RethrownFailure"/>, taken and cleared). When that is the same exception
///    object, rethrown at the same trampoline depth (so, in practice, by the same method
///    invocation: an awaiter's GetResult and the catch around it), the failure is propagating: its
///    level is the rethrown one's plus one. Anything else starts a propagation at level 0.
/// 2. Up to <see cref="MyriadDefaults.FailureTraceLevels"/> the exception is captured afresh, so the
///    trace keeps every level's frames exactly as plain <c>ExceptionDispatchInfo</c> would. Beyond
///    it, the cell keeps the rethrown <see cref="JobFailure"/> itself: every later level rethrows
///    that same captured state, so the trace stops growing (the origin and the first levels stay,
///    followed by the frames of the last rethrow) and each level costs the same.
/// 3. Reading the outcome (<see cref="Rethrow"/>) records the failure in
///    <see cref="PerThread.RethrownFailure"/> and throws it; the awaiting method's catch, on the same
///    thread, completes its own cell, which is step 1 again.</para>
/// <para>A method that catches the exception and throws it again (<c>throw;</c>) continues the same
/// propagation; one that awaits something else in between may resume on another thread and starts
/// a new count. Only the trace is at stake, never the outcome: the one hazard is code that catches
/// an exception beyond the traced levels and throws the same object anew (<c>throw e;</c>) at the
/// same depth with no other failure on the thread in between; its trace is then the earlier
/// propagation's. The per-thread record holds at most one exception per thread until that
/// thread's next failure.</para>
/// </remarks>
internal sealed class JobFailure
{
    private JobFailure(ExceptionDispatchInfo info, int level)
    {
        Info = info;
        Level = level;
    }

    /// <summary>The captured exception and its stack trace.</summary>
    internal ExceptionDispatchInfo Info { get; }

    /// <summary>How many jobs the failure crossed before this one (0 where it started), capped at <see cref="MyriadDefaults.FailureTraceLevels"/>.</summary>
    internal int Level { get; }

    /// <summary>The exception itself.</summary>
    internal Exception Exception => Info.SourceException;

    /// <summary>Step 1 and 2: the failure to keep for <paramref name="exception"/>.</summary>
    internal static JobFailure Capture(Exception exception)
    {
        int level = 0;
        if (PerThread.CurrentOrNull is { RethrownFailure: { } rethrown } state)
        {
            state.RethrownFailure = null;
            if (ReferenceEquals(rethrown.Exception, exception) && state.RethrownAtDepth == state.Depth)
            {
                if (rethrown.Level >= MyriadDefaults.FailureTraceLevels)
                {
                    return rethrown;
                }

                level = rethrown.Level + 1;
            }
        }

        return new JobFailure(ExceptionDispatchInfo.Capture(exception), level);
    }

    /// <summary>
    /// For a combinator that caught <paramref name="exception"/> from an await and throws it again
    /// later (after awaiting other jobs): the failure that await rethrew, if it was this exception.
    /// Pass it to <see cref="Throw"/> so that the propagation's count goes on.
    /// </summary>
    internal static JobFailure? TakeRethrown(Exception exception)
    {
        if (PerThread.CurrentOrNull is { RethrownFailure: { } rethrown } state && ReferenceEquals(rethrown.Exception, exception)
            && state.RethrownAtDepth == state.Depth)
        {
            state.RethrownFailure = null;
            return rethrown;
        }

        return null;
    }

    /// <summary>
    /// Throws <paramref name="exception"/> as <see cref="ExceptionDispatchInfo.Throw(Exception)"/> does,
    /// as one more level of the propagation <paramref name="from"/> (from <see cref="TakeRethrown"/>)
    /// belongs to: beyond the traced levels it rethrows that failure's captured state instead.
    /// </summary>
    [DoesNotReturn]
    [StackTraceHidden]
    internal static void Throw(Exception exception, JobFailure? from)
    {
        if (from is not null && ReferenceEquals(from.Exception, exception))
        {
            if (from.Level >= MyriadDefaults.FailureTraceLevels)
            {
                from.Rethrow();
            }

            from.Record();
        }

        ExceptionDispatchInfo.Throw(exception);
    }

    /// <summary>Step 3: throws the failure to the awaiter, recording it for the awaiter's own completion.</summary>
    /// <remarks>Not inlined, so that the success path of the GetResult that calls it stays as small as before.</remarks>
    [DoesNotReturn]
    [StackTraceHidden]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void Rethrow()
    {
        Record();
        Info.Throw();
    }

    private void Record()
    {
        PerThread state = PerThread.Current;
        state.RethrownFailure = this;
        state.RethrownAtDepth = state.Depth;
    }
}
