using System.Threading.Tasks;
using Microsoft.CodeAnalysis.Testing;
using Xunit;

namespace Myriad.Analyzers.Tests;

public class CapturingLambdaAnalyzerTests
{
    [Fact]
    public Task StatelessSpawn_CapturingLambda_Reports() => Verify.Analyzer<CapturingLambdaAnalyzer>("""
        class C
        {
            static Job Use(int x) => Job.CompletedJob;

            static async Job M(JobRuntime rt, int n)
            {
                int local = n + 1;
                await rt.Spawn({|MYR0004:() => Use(local)|});
                int r = await rt.Spawn({|MYR0004:async () => { await Use(n); return n; }|});
            }
        }
        """);

    [Fact]
    public Task TypedStateForm_LambdaStillCaptures_Reports() => Verify.Analyzer<CapturingLambdaAnalyzer>("""
        class C
        {
            static Job Use(int x, int y) => Job.CompletedJob;

            static void M(JobRuntime rt, int a, int b)
            {
                rt.SpawnDetached(a, {|MYR0004:s => Use(s, b)|});
            }
        }
        """);

    [Fact]
    public Task Run_CapturingLambda_ReportsTheTypedStateTwin() => Verify.Analyzer<CapturingLambdaAnalyzer>("""
        class C
        {
            static Job Use(int x) => Job.CompletedJob;

            static void M(JobRuntime rt, int n)
            {
                rt.Run({|MYR0004:() => Use(n)|});
            }
        }
        """);

    [Fact]
    public Task InstanceMember_CapturesThis_Reports() => Verify.Analyzer<CapturingLambdaAnalyzer>("""
        class C
        {
            private int _x;

            Job Use(int x) => Job.CompletedJob;

            Job M(JobRuntime rt) => rt.Spawn({|MYR0004:() => Use(_x)|});
        }
        """);

    [Fact]
    public Task StaticOrNonCapturingLambda_OrNoTypedStateForm_NoDiagnostic() => Verify.Analyzer<CapturingLambdaAnalyzer>("""
        class C
        {
            static Job Use(int x) => Job.CompletedJob;

            static void M(JobRuntime rt, int n)
            {
                rt.Detach(rt.Spawn(n, static x => Use(x)));
                rt.Detach(rt.Spawn(() => Use(1)));
                Func<Job> notMyriad = () => Use(n);
                rt.Detach(notMyriad());
            }
        }
        """);

    [Fact]
    public Task KeywordNamedLocal_MessageNamesItEscaped() => Verify.Analyzer<CapturingLambdaAnalyzer>(
        """
        class C
        {
            static Job Use(int x) => Job.CompletedJob;

            static Job M(JobRuntime rt, int @event) => rt.Spawn({|#0:() => Use(@event)|});
        }
        """,
        new DiagnosticResult(Descriptors.CapturingLambda)
            .WithLocation(0)
            .WithArguments("The lambda captures @event: pass it as the state of the typed-state overload 'Spawn(state, static s => ...)', which allocates no closure"));
}
