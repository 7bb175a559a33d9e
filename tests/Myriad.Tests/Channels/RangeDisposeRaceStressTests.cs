using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Channels;

/// <summary>
/// <c>DisposeAsync</c> of an enumerator whose <c>MoveNextAsync</c> waits, racing a send (the withdraw
/// steps of <see cref="ChanRange{T}"/>, and the same for the reader view's <c>ReadAllAsync</c>): the
/// item either became the result of the pending <c>MoveNextAsync</c> (true, with it as
/// <c>Current</c>) or stayed in the channel (the read ended withdrawn, canceled). Never both, never
/// neither.
/// </summary>
[Trait("Category", "Stress")]
[Collection(HeavyCollection.Name)]
public sealed class RangeDisposeRaceStressTests
{
    private const int Rounds = 2_000;

    [Theory]
    [InlineData(false, false)]
    [InlineData(false, true)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    public void DisposeAsync_RacingASend_ItemEndsInExactlyOnePlace(bool readerView, bool tokens)
    {
        int withdrawn = 0, delivered = 0;
        for (int round = 0; round < Rounds; round++)
        {
            Chan<int> ch = Chan.Unbounded<int>();
            using var outer = new CancellationTokenSource();
            using var inner = new CancellationTokenSource();
            CancellationToken a = tokens ? outer.Token : default, b = tokens ? inner.Token : default;
            IAsyncEnumerator<int> e = readerView
                ? ch.Reader.ReadAllAsync(a).GetAsyncEnumerator(b)
                : ch.ReadAllAsync(a).GetAsyncEnumerator(b);
            Task<bool> next = e.MoveNextAsync().AsTask();
            using var start = new Barrier(2);
            TestThread sender = TestThread.Start(() =>
            {
                start.SignalAndWait();
                ch.TrySend(round);
            }, "sender");
            start.SignalAndWait();
            Thread.SpinWait(round % 256); // spreads the dispose over the send's window: both outcomes occur
            e.DisposeAsync().AsTask().GetAwaiter().GetResult();
            Assert.True(sender.Join(Bounded.Limit), "the sender hung");

            bool stayed = ch.TryReceive(out int left) || (readerView && ch.Reader.TryRead(out left));
            bool got;
            try
            {
                got = next.GetAwaiter().GetResult();
            }
            catch (OperationCanceledException)
            {
                got = false;
            }

            Assert.True(got ^ stayed, $"round {round}: got {got}, stayed {stayed}");
            Assert.Equal(round, got ? e.Current : left);
            if (got)
            {
                delivered++;
            }
            else
            {
                withdrawn++;
            }
        }

        Assert.Equal(Rounds, withdrawn + delivered);
    }
}
