using System;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Threading;
using Myriad.Scheduling;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Scheduling;

/// <summary>
/// A spawned job that fails after suspending hands its failure to its awaiter as the body threw it:
/// the spawn adds no throw of its own on the way (each one costs microseconds, and a scope that
/// fails cancels all its children) and keeps the body's stack trace.
/// </summary>
public class SpawnFailureTests
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Job<int> FailAfterSuspending(string message)
    {
        await Job.Yield();
        throw new InvalidTimeZoneException(message);
    }

    [Theory]
    [MemberData(nameof(Runtimes.All), MemberType = typeof(Runtimes))]
    public void Await_SpawnThatFailsAfterSuspending_IsThrownOnlyByTheBodyAndTheAwaiter(string name)
    {
        string message = "spawn-failure-" + Guid.NewGuid();
        int throws = 0;
        EventHandler<FirstChanceExceptionEventArgs> count = (_, e) =>
        {
            if (e.Exception.Message == message)
            {
                Interlocked.Increment(ref throws);
            }
        };

        AppDomain.CurrentDomain.FirstChanceException += count;
        try
        {
            TestHelpers.OnThread(() =>
            {
                using JobRuntime runtime = Runtimes.Create(name);
                Exception caught = runtime.Run((runtime, message), static async s =>
                {
                    Job<int> child = s.runtime.Spawn(s.message, static m => FailAfterSuspending(m));
                    try
                    {
                        await child;
                        return new InvalidOperationException("the spawn did not fail");
                    }
                    catch (InvalidTimeZoneException e)
                    {
                        return (Exception)e;
                    }
                }, CancellationToken.None);

                Assert.IsType<InvalidTimeZoneException>(caught);
                Assert.Contains(nameof(FailAfterSuspending), caught.StackTrace);
            });
        }
        finally
        {
            AppDomain.CurrentDomain.FirstChanceException -= count;
        }

        Assert.Equal(2, Volatile.Read(ref throws)); // the body's throw and the awaiter's rethrow
    }
}
