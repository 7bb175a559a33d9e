using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Myriad.Channels;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// A job of a <see cref="DeterministicRuntime"/> that waits through one of Myriad's conversions to
/// BCL types (a Task, a ValueTask, a ChannelReader, an async enumerator) for something another job of
/// the run completes resumes at a step the seed picks, as if it awaited the job directly: no hop
/// through the .NET thread pool decides when it comes back.
/// </summary>
public sealed class DeterministicConversionTests
{
    private const int Runs = 30;

    public static IEnumerable<object[]> Forms() =>
    [
        ["promise.AsTask"],
        ["promise.AsValueTask"],
        ["untyped.AsTask"],
        ["untyped.AsValueTask"],
        ["spawned.AsTask"],
        ["spawned.AsValueTask"],
        ["whenany.AsTask"],
        ["reader.ReadAsync"],
        ["reader.WaitToReadAsync"],
        ["readall.WithCancellation"],
        ["scope.results"],
    ];

    [Theory]
    [MemberData(nameof(Forms))]
    public void AwaitThroughConversion_SameSeedThirtyTimes_GivesOneTrace(string form)
    {
        string first = Trace(form, seed: 7);
        Assert.Contains("W", first, StringComparison.Ordinal);
        for (int run = 1; run < Runs; run++)
        {
            Assert.Equal(first, Trace(form, seed: 7));
        }
    }

    [Fact]
    public void AsTask_PendingPromiseCanceled_TaskIsCanceledWithThePromisesException()
    {
        var promise = new Promise<int>();
        Task<int> task = promise.Job.AsTask();
        var canceled = new OperationCanceledException("stopped", new CancellationToken(true));
        promise.SetException(canceled);

        Assert.True(task.IsCanceled);
        Assert.Same(canceled, Assert.ThrowsAny<OperationCanceledException>(() => task.GetAwaiter().GetResult()));
    }

    [Fact]
    public void AsTask_PendingPromiseFailed_TaskIsFaultedWithThePromisesException()
    {
        var promise = new Promise<int>();
        Task task = promise.Job.AsJob().AsTask();
        var error = new FormatException("bad");
        promise.SetException(error);

        Assert.True(task.IsFaulted);
        Assert.Same(error, Assert.Throws<FormatException>(() => task.GetAwaiter().GetResult()));
    }

    [Fact]
    public void AsTask_AwaitedTwice_Throws()
    {
        var promise = new Promise<int>();
        Job<int> job = promise.Job;
        _ = job.AsTask();
        Assert.Throws<InvalidOperationException>(() => { _ = job.AsTask(); });
    }

    private static string Trace(string form, int seed)
    {
        using var runtime = new DeterministicRuntime(seed);
        var log = new List<string>();
        Bounded.Run(runtime, async () =>
        {
            var promise = new Promise<int>();
            var chan = Chan.Unbuffered<int>();
            Job waiter = runtime.Spawn(async () =>
            {
                await Wait(runtime, form, promise, chan);
                log.Add("W");
            });

            Job Busy(string name) => runtime.Spawn(async () =>
            {
                for (int i = 0; i < 16; i++)
                {
                    log.Add(name + i);
                    if (i == 2 && name == "a")
                    {
                        promise.SetResult(1);
                        chan.TrySend(1);
                    }

                    Thread.SpinWait(2000); // widens the window a pool thread had to slip a resume in
                    await Task.Yield();
                }
            });

            Job a = Busy("a");
            Job b = Busy("b");
            await a;
            await b;
            await waiter;
        });
        return string.Join(" ", log);
    }

    private static async Job Wait(DeterministicRuntime runtime, string form, Promise<int> promise, Chan<int> chan)
    {
        switch (form)
        {
            case "promise.AsTask":
                await promise.Job.AsTask();
                break;
            case "promise.AsValueTask":
                await promise.Job.AsValueTask();
                break;
            case "untyped.AsTask":
                await promise.Job.AsJob().AsTask();
                break;
            case "untyped.AsValueTask":
                await promise.Job.AsJob().AsValueTask();
                break;
            case "spawned.AsTask":
                await runtime.Spawn(promise, static async p => await p.Job).AsTask();
                break;
            case "spawned.AsValueTask":
                await runtime.Spawn(promise, static async p => await p.Job).AsValueTask();
                break;
            case "whenany.AsTask":
                await Job.WhenAny(promise.Job.AsJob()).AsTask();
                break;
            case "reader.ReadAsync":
                await chan.Reader.ReadAsync();
                break;
            case "reader.WaitToReadAsync":
                await chan.Reader.WaitToReadAsync();
                break;
            case "readall.WithCancellation":
                await foreach (int _ in chan.ReadAllAsync().WithCancellation(CancellationToken.None))
                {
                    break;
                }

                break;
            case "scope.results":
                await using (var scope = new JobScope<int>(runtime))
                {
                    await scope.SpawnAsync(promise, static async (p, _) => await p.Job);
                    await foreach (int _ in scope)
                    {
                        break;
                    }
                }

                break;
            default:
                throw new ArgumentException(form, nameof(form));
        }
    }
}
