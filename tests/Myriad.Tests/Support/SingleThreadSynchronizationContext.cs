using System;
using System.Collections.Concurrent;
using System.Threading;
using System.Threading.Tasks;

namespace Myriad.Tests.Support;

/// <summary>A UI-like context: one dedicated thread runs everything posted to it, in order.</summary>
internal sealed class SingleThreadSynchronizationContext : SynchronizationContext, IDisposable
{
    private readonly BlockingCollection<(SendOrPostCallback, object?)> _queue = new();
    private readonly Thread _thread;

    internal SingleThreadSynchronizationContext()
    {
        _thread = new Thread(() =>
        {
            SetSynchronizationContext(this);
            foreach ((SendOrPostCallback callback, object? state) in _queue.GetConsumingEnumerable())
            {
                callback(state);
            }
        }) { IsBackground = true, Name = "ui-like context" };
        _thread.Start();
    }

    internal bool IsCurrentThread => Thread.CurrentThread == _thread;

    public override void Post(SendOrPostCallback d, object? state) => _queue.Add((d, state));

    public override void Send(SendOrPostCallback d, object? state) => throw new NotSupportedException();

    /// <summary>Starts <paramref name="body"/> on the context's thread and returns its task.</summary>
    internal Task<T> Run<T>(Func<Task<T>> body)
    {
        var started = new TaskCompletionSource<Task<T>>(TaskCreationOptions.RunContinuationsAsynchronously);
        Post(_ => started.SetResult(body()), null);
        return started.Task.Unwrap();
    }

    public void Dispose() => _queue.CompleteAdding();
}
