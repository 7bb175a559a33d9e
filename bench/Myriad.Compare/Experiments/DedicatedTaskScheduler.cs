using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Myriad.Compare.Experiments;

/// <summary>
/// A TaskScheduler with its own fixed threads over a BlockingCollection: the "dedicated 2-thread
/// scheduler" of the published E2 variant that drops Task.Yield. Tasks (and the await continuations
/// of code running on it, which capture TaskScheduler.Current) run only on these threads; a task may
/// run inline when the caller is one of them, like the classic samples.
/// </summary>
internal sealed class DedicatedTaskScheduler : TaskScheduler, IDisposable
{
    [ThreadStatic] private static DedicatedTaskScheduler? t_owner;

    private readonly BlockingCollection<Task> _queue = new(new ConcurrentQueue<Task>());
    private readonly Thread[] _threads;

    public DedicatedTaskScheduler(int threadCount)
    {
        _threads = new Thread[threadCount];
        for (int i = 0; i < threadCount; i++)
        {
            _threads[i] = new Thread(Loop) { IsBackground = true, Name = "dedicated scheduler " + i };
            _threads[i].Start();
        }
    }

    public override int MaximumConcurrencyLevel => _threads.Length;

    public void Dispose()
    {
        _queue.CompleteAdding();
        foreach (Thread t in _threads)
        {
            t.Join();
        }

        _queue.Dispose();
    }

    protected override void QueueTask(Task task) => _queue.Add(task);

    protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued) =>
        t_owner == this && TryExecuteTask(task);

    protected override IEnumerable<Task> GetScheduledTasks() => _queue.ToArray();

    private void Loop()
    {
        t_owner = this;
        foreach (Task task in _queue.GetConsumingEnumerable())
        {
            TryExecuteTask(task);
        }
    }
}
