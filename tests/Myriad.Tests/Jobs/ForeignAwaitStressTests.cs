using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// Suspensions on Task awaiters across workers, with pooled boxes and their cached delegates reused
/// all the time: every resume must land on the runtime the await started on, with the job's own
/// AsyncLocal value, exactly once (a box resumed twice or with another job's context shows as a
/// wrong value or count; a lost resume as a hang).
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public class ForeignAwaitStressTests
{
    private static readonly AsyncLocal<int> s_id = new();

    private static async Job<int> AwaitTasksKeepingContext(JobRuntime runtime, int id, int[] resumes)
    {
        // Every other job sets an AsyncLocal (both context and runtime parked: the pooled pair);
        // the rest keep the default context (runtime alone parked).
        bool withLocal = (id & 1) == 0;
        if (withLocal)
        {
            s_id.Value = id;
        }

        int bad = 0;
        for (int i = 0; i < 4; i++)
        {
            if ((i & 1) == 0)
            {
                await Task.Yield();
            }
            else
            {
                await Task.Run(static () => { });
            }

            Interlocked.Increment(ref resumes[id]);
            if (SchedulerContext.Current?.Runtime != runtime || s_id.Value != (withLocal ? id : 0))
            {
                bad++;
            }
        }

        return bad;
    }

    [Fact]
    public void TaskAwaits_AcrossWorkers_ResumeOnceOnTheRuntimeWithTheirOwnContext()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2 });
        for (int round = 0; round < 3; round++)
        {
            var resumes = new int[20_000];
            int bad = TestHelpers.OnThread(() => runtime.Run((runtime, resumes), static async s =>
            {
                var handles = new Job<int>[s.resumes.Length];
                for (int id = 0; id < handles.Length; id++)
                {
                    handles[id] = s.runtime.Spawn((s.runtime, id, s.resumes), static x => AwaitTasksKeepingContext(x.runtime, x.id, x.resumes));
                }

                int total = 0;
                foreach (Job<int> handle in handles)
                {
                    total += await handle;
                }

                return total;
            }));
            Assert.Equal(0, bad);
            Assert.All(resumes, count => Assert.Equal(4, count));
        }
    }
}
