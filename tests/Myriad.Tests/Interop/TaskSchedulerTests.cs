using System.Threading;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Interop;

[Collection(HeavyCollection.Name)]
[Trait("Category", "Slow")]
public class TaskSchedulerTests
{
    private static async Task<int> Link(Task<int> previous) => await previous + 1;

    [Fact]
    public void PlainTaskChain_OneMillion_NoYield_OnRuntimeScheduler_CompletesWithoutOverflow()
    {
        const int length = 1_000_000;
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 2, ThreadStackSize = 1 << 20 });
        Task<int> chain = Task.Factory.StartNew(() =>
        {
            var head = new TaskCompletionSource<int>();
            Task<int> tail = head.Task;
            for (int i = 0; i < length; i++)
            {
                tail = Link(tail);
            }

            head.SetResult(0);
            return tail;
        }, CancellationToken.None, TaskCreationOptions.None, runtime.TaskScheduler).Unwrap();
        Assert.True(chain.Wait(System.TimeSpan.FromSeconds(120)));
        Assert.Equal(length, chain.Result);
    }

    [Fact]
    public void TaskScheduler_MaximumConcurrency_IsWorkerCount()
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 3 });
        Assert.Equal(3, runtime.TaskScheduler.MaximumConcurrencyLevel);
        Assert.Same(runtime.TaskScheduler, runtime.TaskScheduler);
    }
}
