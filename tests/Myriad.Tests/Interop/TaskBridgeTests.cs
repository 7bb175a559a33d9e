using System;
using System.Threading.Tasks;
using Myriad.Internal;
using Myriad.Jobs;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Interop;

/// <summary><c>AsTask()</c> of a pending job that no single-threaded runtime owns: a task completed by a continuation on the job.</summary>
public class TaskBridgeTests
{
    [Fact]
    public void AsTask_JobWaitedOnBeforeTheTaskTookItsOutcome_TaskReportsTheMisuseAndNothingIsThrownIntoTheCompleter()
    {
        // A misuse (AsTask, then Wait on the same handle) whose Wait comes between the job's
        // completion and the task's transfer: the completion deferred the transfer (a deep stack,
        // as on a worker running a long chain), and the wait consumed the job meanwhile. The
        // transfer used to throw the stale-handle exception into whoever ran it: a worker, which
        // ended the process.
        TestHelpers.OnThread(() =>
        {
            var promise = new Promise<int>();
            Job<int> job = promise.Job;
            Task<int> task = job.AsTask();

            PerThread state = PerThread.Current;
            state.Depth = MyriadDefaults.MaxInlineDepth; // every dispatch is deferred to this thread's FIFO
            promise.SetResult(42);
            int waited = job.Wait();
            Exception? thrown = Record.Exception(() => Trampoline.Exit(state, 0)); // runs the deferred transfer

            Assert.Null(thrown);
            Assert.Equal(42, waited);
            Assert.True(task.IsFaulted);
            Assert.IsType<InvalidOperationException>(task.Exception!.InnerException);
        });
    }
}
