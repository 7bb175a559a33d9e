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

    [Fact]
    public Task ScopeSpawn_LambdaStillCaptures_Reports() => Verify.Analyzer<CapturingLambdaAnalyzer>("""
        class C
        {
            static Job Use(int x) => Job.CompletedJob;

            static Job<int> Get(int x) => Job.FromResult(x);

            static async Job M(JobScope scope, JobScope<int> results, int a, int b)
            {
                await scope.SpawnAsync(a, {|MYR0004:(s, ct) => Use(s + b)|});
                bool started = scope.TrySpawn(a, {|MYR0004:(s, ct) => Use(s + b)|});
                await results.SpawnAsync(a, {|MYR0004:(s, ct) => Get(s + b)|});
                started |= results.TrySpawn(a, {|MYR0004:(s, ct) => Get(s + b)|});
                await scope.SpawnAsync((a, b), static (s, ct) => Use(s.a + s.b));
            }
        }
        """);

    [Fact]
    public Task SelectHandler_Captures_Reports() => Verify.Analyzer<CapturingLambdaAnalyzer>("""
        using Myriad.Channels;

        class C
        {
            static void M(Chan<int> ch, ReceiveOnlyChan<int> ro, int n)
            {
                SelectBuilder a = Select.Receive(ch, {|MYR0004:v => Console.WriteLine(v + n)|});
                SelectBuilder b = Select.Receive(ch, n, {|MYR0004:(s, v) => Console.WriteLine(s + v + n)|});
                SelectBuilder c = Select.ReceiveOk(ro, {|MYR0004:r => Console.WriteLine(r.Ok ? n : 0)|});
                SelectBuilder d = a.ReceiveOk(ch, n, {|MYR0004:(s, r) => Console.WriteLine(s + n)|});
                SelectBuilder e = b.Send(ch, 1, {|MYR0004:() => Console.WriteLine(n)|});
                SelectBuilder f = c.Receive(ch, n, static (s, v) => Console.WriteLine(s + v))
                    .Receive(ro, v => Console.WriteLine(v))
                    .Send(ch, 2, n, static s => Console.WriteLine(s))
                    .Timeout(TimeSpan.FromSeconds(1), () => Console.WriteLine(n)); // no typed-state Timeout
            }
        }
        """);

    [Fact]
    public Task SelectReceive_Message_PutsTheStateBeforeTheHandler() => Verify.Analyzer<CapturingLambdaAnalyzer>(
        """
        using Myriad.Channels;

        class C
        {
            static SelectBuilder M(Chan<int> ch, int n) => Select.Receive(ch, {|#0:v => Console.WriteLine(v + n)|});
        }
        """,
        new DiagnosticResult(Descriptors.CapturingLambda)
            .WithLocation(0)
            .WithArguments("The lambda captures n: pass it as the state of the typed-state overload 'Receive(..., state, static (s, ...) => ...)', which allocates no closure"));
}
