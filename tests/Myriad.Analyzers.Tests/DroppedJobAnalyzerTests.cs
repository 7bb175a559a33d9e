using System.Threading.Tasks;
using Xunit;

namespace Myriad.Analyzers.Tests;

public class DroppedJobAnalyzerTests
{
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
