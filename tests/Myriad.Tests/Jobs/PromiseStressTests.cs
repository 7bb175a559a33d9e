using System;
using System.Threading;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>
/// <see cref="Promise{T}"/>'s <c>TrySet</c> methods race from several threads (<c>Job.WhenAny</c> does
/// exactly that): one completer must win, and the awaiting continuation must run once, with the
/// winner's outcome.
/// </summary>
[Collection(HeavyCollection.Name)]
[Trait("Category", "Stress")]
public sealed class PromiseStressTests
{
    // Each promise is a barrier phase of all completers: on two loaded cores a phase can take
    // milliseconds, so the count is kept where a round fits well inside the join limit below.
    private const int Promises = 5_000;
    private const int Completers = 3;

    private static readonly TimeSpan CompleterLimit = TimeSpan.FromSeconds(120);

    [Fact]
    public void TrySet_RacingCompleters_OneWinsAndTheAwaiterRunsOnce()
    {
        for (int round = 0; round < 3; round++)
        {
            var promises = new Promise<int>[Promises];
            var awaiters = new JobAwaiter<int>[Promises];
            var runs = new int[Promises];
            var wins = new int[Promises];
            var winner = new int[Promises];
            for (int i = 0; i < Promises; i++)
            {
                promises[i] = new Promise<int>();
                awaiters[i] = promises[i].Job.GetAwaiter();
                int index = i;
                awaiters[i].UnsafeOnCompleted(() => Interlocked.Increment(ref runs[index]));
            }

            // All completers meet at every promise, so that each one is completed by all of them at once.
            // Not disposed by a using: if a join below fails, the completers still running must find
            // the barrier alive (a disposed one throws on their threads and ends the test host).
            var meet = new Barrier(Completers);
            Exception? thrown = null;
            var threads = new Thread[Completers];
            for (int t = 0; t < Completers; t++)
            {
                int id = t + 1;
                threads[t] = new Thread(() =>
                {
                    for (int i = 0; i < Promises; i++)
                    {
                        if (!meet.SignalAndWait(CompleterLimit))
                        {
                            Interlocked.CompareExchange(ref thrown, new TimeoutException("a completer never met the others"), null);
                            return;
                        }

                        try
                        {
                            bool won = id == Completers
                                ? promises[i].TrySetException(new FormatException(id.ToString(System.Globalization.CultureInfo.InvariantCulture)))
                                : promises[i].TrySetResult(id);
                            if (won)
                            {
                                Interlocked.Increment(ref wins[i]);
                                winner[i] = id;
                            }
                        }
                        catch (Exception e)
                        {
                            Interlocked.CompareExchange(ref thrown, e, null); // a losing completer must not throw
                        }
                    }
                }) { IsBackground = true };
                threads[t].Start();
            }

            foreach (Thread thread in threads)
            {
                Assert.True(thread.Join(CompleterLimit), "a completer hung");
            }

            meet.Dispose();

            Assert.Null(thrown);
            for (int i = 0; i < Promises; i++)
            {
                Assert.Equal(1, wins[i]);
                Assert.Equal(1, runs[i]);
                if (winner[i] == Completers)
                {
                    FormatException e = Assert.Throws<FormatException>(() => awaiters[i].GetResult());
                    Assert.Equal(Completers.ToString(System.Globalization.CultureInfo.InvariantCulture), e.Message);
                }
                else
                {
                    Assert.Equal(winner[i], awaiters[i].GetResult());
                }
            }
        }
    }
}
