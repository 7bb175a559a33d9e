using System.Threading.Tasks;
using Xunit;

namespace Myriad.Analyzers.Tests;

public class DroppedJobAnalyzerTests
{
    [Fact]
    public Task SynchronousSpawnBody_DroppedJob_LeftToMyr0005() => Verify.Analyzer<DroppedJobAnalyzer>("""
        class C
        {
            static Job Work() => Job.CompletedJob;

            static void M(JobRuntime rt, C? service)
            {
                rt.SpawnDetached(() => Work());                  // MYR0005's, not reported twice
                rt.Detach(rt.Spawn(service, static s => s?.RunAsync())); // the same, through a null check
                rt.SpawnDetached(() => { _ = {|MYR0001:Work()|}; }); // an explicit discard is MYR0001's
                System.Action a = () => {|MYR0001:Work()|};      // not a spawn body
                a();
            }

            Job RunAsync() => Job.CompletedJob;
        }
        """);

    [Fact]
    public Task Call_ResultDropped_Reports() => Verify.Analyzer<DroppedJobAnalyzer>("""
        class C
        {
            static async Job Foo() => await Job.Delay(1);
            static async Job<int> Bar() { await Job.Delay(1); return 1; }

            static void M()
            {
                {|MYR0001:Foo()|};
                {|MYR0001:Bar()|};
            }
        }
        """);

    [Fact]
    public Task Discard_JobAssignedToUnderscore_Reports() => Verify.Analyzer<DroppedJobAnalyzer>("""
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static void M(JobRuntime rt)
            {
                _ = {|MYR0001:Foo()|};
                _ = {|MYR0001:rt.Spawn(static () => Job.CompletedJob)|};
            }
        }
        """);

    [Fact]
    public Task Lambda_ExpressionBodyToVoidDelegate_Reports() => Verify.Analyzer<DroppedJobAnalyzer>("""
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static void M()
            {
                Action a = () => {|MYR0001:Foo()|};
                a();
            }
        }
        """);

    [Fact]
    public Task Local_NeverRead_Reports() => Verify.Analyzer<DroppedJobAnalyzer>("""
        class C
        {
            static Job<int> Foo() => Job.FromResult(1);

            static void M()
            {
                Job<int> {|MYR0001:job|} = Foo();
            }
        }
        """);

    [Fact]
    public Task ConsumedForms_NoDiagnostic() => Verify.Analyzer<DroppedJobAnalyzer>("""
        class C
        {
            static async Job Foo() => await Job.Delay(1);
            static Job<int> Bar() => Job.FromResult(1);

            static async Job M(JobRuntime rt)
            {
                await Foo();
                rt.Detach(Foo());
                rt.SpawnDetached(0, static _ => Foo());
                Job j = Foo();
                await j;
                Job<int> k;
                k = Bar();
                Task<int> t = k.AsTask();
                await t;
                int x = Bar().Wait();
                Func<Job> f = () => Foo();
                await f();
                await rt.Spawn(static () => Foo());
            }
        }
        """);
}
