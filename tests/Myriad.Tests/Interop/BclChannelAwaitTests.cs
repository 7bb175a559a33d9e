using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Interop;

/// <summary>
/// A job that awaits an operation of a <c>System.Threading.Channels</c> channel is resumed from the
/// thread that completes the operation, queued on the job's runtime: it runs there, never inside the
/// writer's call, and the channel's asynchronous-continuation rule still holds. (Without the context
/// a job shows while it registers, the channel would send the resume through the thread pool.)
/// </summary>
public sealed class BclChannelAwaitTests
{
    [Theory]
    [InlineData("read")]
    [InlineData("wait-to-read")]
    public async Task Await_BclChannelWrittenByAPlainThread_JobResumesOnItsRuntime(string how)
    {
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var channel = Channel.CreateBounded<int>(1);
        var received = new List<(int Item, bool OnRuntime)>();
        Job reader = runtime.Spawn((channel, received, how), static async s =>
        {
            for (int i = 0; i < 100; i++)
            {
                int item;
                if (s.how == "read")
                {
                    item = await s.channel.Reader.ReadAsync();
                }
                else
                {
                    Assert.True(await s.channel.Reader.WaitToReadAsync());
                    Assert.True(s.channel.Reader.TryRead(out item));
                }

                s.received.Add((item, JobRuntime.Current is not null));
            }
        });

        for (int i = 0; i < 100; i++)
        {
            await channel.Writer.WriteAsync(i);
        }

        await reader.AsTask().WaitAsync(TestHelpers.DefaultTimeout);
        Assert.Equal(100, received.Count);
        for (int i = 0; i < 100; i++)
        {
            Assert.Equal(i, received[i].Item);
            Assert.True(received[i].OnRuntime, $"item {i} resumed off the runtime");
        }
    }

    [Fact]
    public async Task WriteAsync_FromAJobOfTheSameRuntime_WakesTheReaderBehindTheWriterNotInsideIt()
    {
        // One worker: a reader run inside the write would have run before the write returned.
        using var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1, MaxSpareThreads = 0 });
        var channel = Channel.CreateUnbounded<int>();
        var ran = new StrongBoxInt();
        Job reader = runtime.Spawn((channel, ran), static async s =>
        {
            await s.channel.Reader.ReadAsync();
            Volatile.Write(ref s.ran.Value, 1);
        });

        bool ranInsideTheWrite = await runtime.Spawn((channel, ran), static async s =>
        {
            await Job.Yield(); // let the reader suspend first
            await Job.Yield();
            Assert.True(s.channel.Writer.TryWrite(1));
            return Volatile.Read(ref s.ran.Value) == 1;
        }).AsTask().WaitAsync(TestHelpers.DefaultTimeout);

        await reader.AsTask().WaitAsync(TestHelpers.DefaultTimeout);
        Assert.False(ranInsideTheWrite);
        Assert.Equal(1, Volatile.Read(ref ran.Value));
    }

    [ThreadStatic]
    private static bool t_insideTheWrite;

    [Fact]
    public void TryWrite_AfterTheReadersRuntimeWasDisposed_TheReadersEndRunsOutsideTheWrite()
    {
        // The disposed runtime abandons the reader (it ends canceled), which runs whatever awaits
        // it: not inside the writer's call, which asked for an asynchronous continuation.
        var runtime = new MultiThreadRuntime(new RuntimeOptions { WorkerCount = 1 });
        var channel = Channel.CreateUnbounded<int>();
        var started = new ManualResetEventSlim();
        Job reader = runtime.Spawn((channel, started), static async s =>
        {
            s.started.Set();
            await s.channel.Reader.ReadAsync();
        });
        Assert.True(started.Wait(TestHelpers.DefaultTimeout));
        Thread.Sleep(50); // the reader registers on the read
        runtime.Dispose();

        var ended = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

        // Plain code on a thread with no SynchronizationContext (a test runner's thread may have
        // one, which the registration would capture and post the continuation to).
        TestHelpers.OnThread(() =>
        {
            reader.GetAwaiter().UnsafeOnCompleted(() => ended.TrySetResult(t_insideTheWrite));
            t_insideTheWrite = true;
            try
            {
                Assert.True(channel.Writer.TryWrite(1));
            }
            finally
            {
                t_insideTheWrite = false;
            }
        });

        Assert.True(ended.Task.Wait(TestHelpers.DefaultTimeout));
        Assert.False(ended.Task.Result, "the reader's end ran inside TryWrite");
        Assert.ThrowsAny<OperationCanceledException>(() => reader.GetAwaiter().GetResult());
    }

    private sealed class StrongBoxInt
    {
        public int Value;
    }
}
