using System;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;

namespace Myriad.Benchmarks;

/// <summary>
/// Starting and canceling timers: a batch of 1000 one-minute delays on one cancellation token,
/// then the token is canceled (each delay leaves its timer structure at once). Figures are per
/// delay: the cost of one insert and one cancel, the token's callback included. The baseline is
/// <c>Task.Delay</c> with a token. <see cref="Pending"/> delays stay scheduled throughout, so that
/// inserts and cancels happen in a structure that already holds many timers.
/// </summary>
[Config(typeof(BenchConfig))]
public class TimerBenchmarks
{
    private const int Batch = 1000;

    private readonly Job[] _jobs = new Job[Batch];
    private readonly Task[] _tasks = new Task[Batch];
    private CancellationTokenSource _background = null!;

    /// <summary>Timers already pending (due in one hour) while the batch runs.</summary>
    [Params(0, 1_000_000)]
    public int Pending { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _background = new CancellationTokenSource();
        for (int i = 0; i < Pending; i++)
        {
            _ = Job.Delay(TimeSpan.FromHours(1) + TimeSpan.FromMilliseconds(i % 60_000), _background.Token);
        }
    }

    [GlobalCleanup]
    public void Cleanup() => _background.Cancel();

    [Benchmark(Baseline = true, OperationsPerInvoke = Batch, Description = "Task.Delay + cancel")]
    public int TaskDelayCancel()
    {
        using var cts = new CancellationTokenSource();
        for (int i = 0; i < Batch; i++)
        {
            _tasks[i] = Task.Delay(TimeSpan.FromMinutes(1) + TimeSpan.FromMilliseconds(i), cts.Token);
        }

        cts.Cancel();
        int canceled = 0;
        foreach (Task task in _tasks)
        {
            canceled += task.IsCanceled ? 1 : 0;
        }

        return canceled;
    }

    [Benchmark(OperationsPerInvoke = Batch, Description = "Job.Delay + cancel")]
    public int JobDelayCancel()
    {
        using var cts = new CancellationTokenSource();
        for (int i = 0; i < Batch; i++)
        {
            _jobs[i] = Job.Delay(TimeSpan.FromMinutes(1) + TimeSpan.FromMilliseconds(i), cts.Token);
        }

        cts.Cancel();
        int canceled = 0;
        foreach (Job job in _jobs)
        {
            canceled += job.IsCompleted ? 1 : 0; // not consumed: a canceled delay's cell is not pooled, and throwing would dominate the figure
        }

        return canceled;
    }
}
