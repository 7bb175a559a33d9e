using System.Threading.Tasks;
using Xunit;

namespace Myriad.Analyzers.Tests;

public class DiscardedAwaitableAnalyzerTests
{
    [Fact]
    public Task SynchronousBodies_CallReturningATask_Report() => Verify.Analyzer<DiscardedAwaitableAnalyzer>("""
        class C
        {
            static Task SendAsync() => Task.CompletedTask;
            static Task<int> CountAsync(int n) => Task.FromResult(n);
            static ValueTask FlushAsync() => default;

            static void M(JobRuntime rt)
            {
                Job a = rt.Spawn(() => {|MYR0005:SendAsync()|});
                rt.SpawnDetached(() => {|MYR0005:FlushAsync()|});
                rt.Run(() => { {|MYR0005:SendAsync()|}; });
                Job b = rt.Spawn(5, static n => {|MYR0005:CountAsync(n)|});
                rt.SpawnDetached(5, static n => {|MYR0005:CountAsync(n)|});
            }
        }
        """);

    [Fact]
    public Task SynchronousBodies_JobsThatMatchNoJobForm_Report() => Verify.Analyzer<DiscardedAwaitableAnalyzer>("""
        class Service { public Job RunAsync() => Job.CompletedJob; }

        class C
        {
            static Job<int> Count() => Job.FromResult(1);

            static void M(JobRuntime rt, Service? service)
            {
                Job a = rt.Spawn(() => {|MYR0005:service?.RunAsync()|});
                rt.SpawnDetached(() => {|MYR0005:Count()|});
            }
        }
        """);

    [Fact]
    public Task AsyncLambdasJobsDiscardsAndOtherCalls_NoDiagnostic() => Verify.Analyzer<DiscardedAwaitableAnalyzer>("""
        class C
        {
            static Task SendAsync() => Task.CompletedTask;
            static Job Work() => Job.CompletedJob;
            static int counter;

            static void M(JobRuntime rt, Action<Action> elsewhere)
            {
                Job a = rt.Spawn(async () => await SendAsync());
                Job b = rt.Spawn(() => Work());
                Job c = rt.Spawn(() => { _ = SendAsync(); });
                Job d = rt.Spawn(() => { counter++; });
                elsewhere(() => SendAsync());
            }
        }
        """);
}
