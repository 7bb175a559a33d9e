using System.Threading.Tasks;
using Xunit;

namespace Myriad.Analyzers.Tests;

public class CodeFixTests
{
    [Fact]
    public Task DroppedJob_InAsyncMethod_AwaitFixAwaits() => Verify.CodeFix<DroppedJobAnalyzer, DroppedJobCodeFixProvider>(
        """
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static async Job M()
            {
                {|MYR0001:Foo()|};
                _ = {|MYR0001:Foo()|};
            }
        }
        """,
        """
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static async Job M()
            {
                await Foo();
                await Foo();
            }
        }
        """,
        DroppedJobCodeFixProvider.AwaitKey);

    [Fact]
    public Task DroppedJob_RuntimeInScope_DetachFixHandsItOver() => Verify.CodeFix<DroppedJobAnalyzer, DroppedJobCodeFixProvider>(
        """
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static void M(JobRuntime runtime)
            {
                {|MYR0001:Foo()|};
            }
        }
        """,
        """
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static void M(JobRuntime runtime)
            {
                runtime.Detach(Foo());
            }
        }
        """,
        DroppedJobCodeFixProvider.DetachKey);

    [Fact]
    public Task BlockingCall_AllForms_BecomeAwait() => Verify.CodeFix<BlockingInAsyncJobAnalyzer, BlockingCallCodeFixProvider>(
        """
        class C
        {
            static Job<string> Foo() => Job.FromResult("a");

            static async Job<int> M(Task<string> task)
            {
                string a = {|MYR0003:Foo().Wait()|};
                int b = {|MYR0003:task.Result|}.Length;
                string c = {|MYR0003:Foo().GetAwaiter().GetResult()|};
                return a.Length + b + c.Length;
            }
        }
        """,
        """
        class C
        {
            static Job<string> Foo() => Job.FromResult("a");

            static async Job<int> M(Task<string> task)
            {
                string a = await Foo();
                int b = (await task).Length;
                string c = await Foo();
                return a.Length + b + c.Length;
            }
        }
        """,
        BlockingCallCodeFixProvider.AwaitKey);

    [Fact]
    public Task CapturingLambda_OneCapturedLocal_BecomesTypedState() => Verify.CodeFix<CapturingLambdaAnalyzer, CapturingLambdaCodeFixProvider>(
        """
        class C
        {
            static Job Use(int x) => Job.CompletedJob;

            static async Job M(JobRuntime rt, int n)
            {
                int local = n + 1;
                await rt.Spawn({|MYR0004:() => Use(local)|});
                await rt.Spawn({|MYR0004:async () => await Use(n)|}, default);
            }
        }
        """,
        """
        class C
        {
            static Job Use(int x) => Job.CompletedJob;

            static async Job M(JobRuntime rt, int n)
            {
                int local = n + 1;
                await rt.Spawn(local, static local => Use(local));
                await rt.Spawn(n, static async n => await Use(n), default);
            }
        }
        """,
        CapturingLambdaCodeFixProvider.StateKey);

    [Theory]
    [InlineData(DroppedJobCodeFixProvider.AwaitKey)]
    [InlineData(DroppedJobCodeFixProvider.DetachKey)]
    public Task DroppedJob_InExpressionBodiedLambda_NoFix(string key) => Verify.NoCodeFix<DroppedJobAnalyzer, DroppedJobCodeFixProvider>(
        """
        using System.Collections.Generic;

        class C
        {
            static Job Work(int id) => Job.CompletedJob;

            static async Job M(JobRuntime rt, List<int> ids)
            {
                ids.ForEach(id => {|MYR0001:Work(id)|});
                Action<int> a = id => {|MYR0001:Work(id)|};
                await Job.CompletedJob;
            }
        }
        """,
        key);

    [Fact]
    public Task DroppedJob_InBlockBodiedLambda_DetachFixStaysInside() => Verify.CodeFix<DroppedJobAnalyzer, DroppedJobCodeFixProvider>(
        """
        using System.Collections.Generic;

        class C
        {
            static Job Work(int id) => Job.CompletedJob;

            static void M(JobRuntime rt, List<int> ids)
            {
                ids.ForEach(id => { {|MYR0001:Work(id)|}; });
            }
        }
        """,
        """
        using System.Collections.Generic;

        class C
        {
            static Job Work(int id) => Job.CompletedJob;

            static void M(JobRuntime rt, List<int> ids)
            {
                ids.ForEach(id => { rt.Detach(Work(id)); });
            }
        }
        """,
        DroppedJobCodeFixProvider.DetachKey);

    [Fact]
    public Task DroppedJob_InLock_NoAwaitFix() => Verify.NoCodeFix<DroppedJobAnalyzer, DroppedJobCodeFixProvider>(
        """
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static async Job M(object gate)
            {
                lock (gate)
                {
                    {|MYR0001:Foo()|};
                }

                await Job.CompletedJob;
            }
        }
        """,
        DroppedJobCodeFixProvider.AwaitKey);

    [Fact]
    public Task DroppedJob_InLock_DetachFixHandsItOver() => Verify.CodeFix<DroppedJobAnalyzer, DroppedJobCodeFixProvider>(
        """
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static async Job M(object gate, JobRuntime rt)
            {
                lock (gate)
                {
                    {|MYR0001:Foo()|};
                }

                await Job.CompletedJob;
            }
        }
        """,
        """
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static async Job M(object gate, JobRuntime rt)
            {
                lock (gate)
                {
                    rt.Detach(Foo());
                }

                await Job.CompletedJob;
            }
        }
        """,
        DroppedJobCodeFixProvider.DetachKey);

    [Fact]
    public Task BlockingCall_SpanLocalInScope_NoFix() => Verify.NoCodeFix<BlockingInAsyncJobAnalyzer, BlockingCallCodeFixProvider>(
        """
        class C
        {
            static async Job<int> M(Task<int> t)
            {
                await Job.Delay(1);
                System.Span<int> s = stackalloc int[2];
                s[0] = {|MYR0003:t.Result|}; // an await here would keep the span across it (CS4007)
                return s[0];
            }
        }
        """,
        BlockingCallCodeFixProvider.AwaitKey);

    [Fact]
    public Task DroppedJob_RuntimeDeclaredWithoutValue_NoDetachFix() => Verify.NoCodeFix<DroppedJobAnalyzer, DroppedJobCodeFixProvider>(
        """
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static void M()
            {
                JobRuntime rt;
                {|MYR0001:Foo()|}; // rt.Detach here would read an unassigned local (CS0165)
                rt = new CurrentThreadRuntime();
                rt.Dispose();
            }
        }
        """,
        DroppedJobCodeFixProvider.DetachKey);

    [Fact]
    public Task BlockingCall_InLockOrExceptionFilter_NoFix() => Verify.NoCodeFix<BlockingInAsyncJobAnalyzer, BlockingCallCodeFixProvider>(
        """
        class C
        {
            static async Job<int> M(Job<int> j, Task<int> t, Task<int> u, object gate)
            {
                int b;
                lock (gate)
                {
                    b = {|MYR0003:j.Wait()|} + {|MYR0003:t.Result|};
                }

                try
                {
                    b += await u;
                }
                catch (InvalidOperationException) when ({|MYR0003:t.Result|} > 0)
                {
                }

                return b;
            }
        }
        """,
        BlockingCallCodeFixProvider.AwaitKey);

    [Fact]
    public Task DroppedJob_NullableRuntimeNearer_DetachFixUsesTheNonNullOne() => Verify.CodeFix<DroppedJobAnalyzer, DroppedJobCodeFixProvider>(
        """
        #nullable enable
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static void M(JobRuntime runtime, bool b)
            {
                MultiThreadRuntime? maybe = b ? new MultiThreadRuntime() : null;
                {|MYR0001:Foo()|};
                maybe?.Dispose();
            }
        }
        """,
        """
        #nullable enable
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static void M(JobRuntime runtime, bool b)
            {
                MultiThreadRuntime? maybe = b ? new MultiThreadRuntime() : null;
                runtime.Detach(Foo());
                maybe?.Dispose();
            }
        }
        """,
        DroppedJobCodeFixProvider.DetachKey);

    [Fact]
    public Task CapturingLambda_KeywordNamedLocal_StaysEscaped() => Verify.CodeFix<CapturingLambdaAnalyzer, CapturingLambdaCodeFixProvider>(
        """
        class C
        {
            static Job Use(int x) => Job.CompletedJob;

            static async Job M(JobRuntime rt)
            {
                int @event = 3;
                await rt.Spawn({|MYR0004:() => Use(@event)|});
            }
        }
        """,
        """
        class C
        {
            static Job Use(int x) => Job.CompletedJob;

            static async Job M(JobRuntime rt)
            {
                int @event = 3;
                await rt.Spawn(@event, static @event => Use(@event));
            }
        }
        """,
        CapturingLambdaCodeFixProvider.StateKey);

    [Fact]
    public Task DroppedJob_KeywordNamedRuntime_DetachFixStaysEscaped() => Verify.CodeFix<DroppedJobAnalyzer, DroppedJobCodeFixProvider>(
        """
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static void M(JobRuntime @lock)
            {
                {|MYR0001:Foo()|};
            }
        }
        """,
        """
        class C
        {
            static Job Foo() => Job.CompletedJob;

            static void M(JobRuntime @lock)
            {
                @lock.Detach(Foo());
            }
        }
        """,
        DroppedJobCodeFixProvider.DetachKey);

    [Fact]
    public Task CapturingLambda_HandlerWithParameters_NoFix() => Verify.NoCodeFix<CapturingLambdaAnalyzer, CapturingLambdaCodeFixProvider>(
        """
        using Myriad.Channels;

        class C
        {
            static SelectBuilder M(Chan<int> ch, int n) => Select.Receive(ch, {|MYR0004:v => Console.WriteLine(v + n)|});
        }
        """,
        CapturingLambdaCodeFixProvider.StateKey);
}
