using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// An item on its way to a reader job whose runtime is disposed comes back while another thread reads
/// the closed channel through the reader view: that read must get the item, never hang and never end
/// closed while the item is still there (ChanBridge.Reader.cs, GiveBack).
/// </summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class ChanReaderCloseRaceStressTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    public void ReadAsync_RacingTheGiveBackOfAClosedChannelsLastItem_GetsIt(int capacity)
    {
        int iterations = 0, hangs = 0, closedWithItem = 0, wrong = 0;
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < TimeSpan.FromSeconds(4))
        {
            iterations++;
            Chan<int> ch = capacity == 0 ? Chan.Unbuffered<int>() : Chan.Bounded<int>(capacity);
            var runtime = new CurrentThreadRuntime();
            runtime.Spawn(ch, static async c => { await c.Reader.ReadAsync(); });
            runtime.RunUntilIdle(); // the job waits in ReadAsync
            Assert.True(ch.TrySend(11)); // handed to the job, whose resume is queued: nobody drives it
            ch.Close();
            int go = 0;
            Task<Task<int>> reader = Task.Factory.StartNew(
                () =>
                {
                    while (Volatile.Read(ref go) == 0)
                    {
                    }

                    return ch.Reader.ReadAsync().AsTask();
                },
                TaskCreationOptions.LongRunning);
            Thread.SpinWait(50);
            Volatile.Write(ref go, 1);
            Thread.SpinWait(Random.Shared.Next(0, 60));
            runtime.Dispose(); // the job can no longer run: its item goes back
            Task<int> read = reader.Result;
            if (!((IAsyncResult)read).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(5)))
            {
                hangs++;
            }
            else if (read.IsFaulted && ch.Reader.Count > 0)
            {
                closedWithItem++;
            }
            else if (!read.IsCompletedSuccessfully || read.Result != 11)
            {
                wrong++;
            }
        }

        Assert.True(
            hangs == 0 && closedWithItem == 0 && wrong == 0,
            $"capacity {capacity}: {iterations} rounds, {hangs} reads hung, {closedWithItem} ended closed with the item still there, {wrong} got something else");
    }
}
