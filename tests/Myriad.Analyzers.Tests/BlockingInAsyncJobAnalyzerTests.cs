using System.Threading.Tasks;
using Xunit;

namespace Myriad.Analyzers.Tests;

public class BlockingInAsyncJobAnalyzerTests
{
    [Fact]
    public Task AsyncJobMethod_BlockingForms_Report() => Verify.Analyzer<BlockingInAsyncJobAnalyzer>("""
        class C
        {
            static Job<int> Foo() => Job.FromResult(1);

            static async Job<int> M(Task<int> task, Task plain, ValueTask<int> value)
            {
                int a = {|MYR0003:Foo().Wait()|};
                {|MYR0003:plain.Wait()|};
                int b = {|MYR0003:task.Result|};
                int c = {|MYR0003:Foo().GetAwaiter().GetResult()|};
                int d = {|MYR0003:value.Result|};
                await Job.Delay(1);
                return a + b + c + d;
            }
        }
        """);

    [Fact]
    public Task AsyncJobMethod_SleepAndWaitAll_Report() => Verify.Analyzer<BlockingInAsyncJobAnalyzer>("""
        class C
        {
            static async Job M(Task a, Task b)
            {
                {|MYR0003:System.Threading.Thread.Sleep(10)|};
                {|MYR0003:Task.WaitAll(a, b)|};
                int first = {|MYR0003:Task.WaitAny(a, b)|};
                await Job.Delay(first);
            }
        }
        """);

    [Fact]
    public Task AsyncJobMethod_ResultOfACompletedTaskOrAPoll_NoDiagnostic() => Verify.Analyzer<BlockingInAsyncJobAnalyzer>("""
        class C
        {
            static async Job<int> AfterWhenAll(Task<int> a, Task<int> b)
            {
                await Task.WhenAll(a, b);
                return a.Result + b.Result;
            }

            static async Job<int> AfterAwait(Task<int> a)
            {
                int first = await a.ConfigureAwait(false);
                return first + a.Result;
            }

            static async Job<int> Guarded(ValueTask<int> value, Task<int> task)
            {
                if (value.IsCompletedSuccessfully)
                {
                    return value.Result;
                }

                int polled = task.Wait(0) ? 1 : 0;
                await Job.Delay(1);
                return task.IsCompleted ? task.Result + polled : polled;
            }
        }
        """);

    [Fact]
    public Task AsyncJobLambdaAndLocalFunction_Wait_Reports() => Verify.Analyzer<BlockingInAsyncJobAnalyzer>("""
        class C
        {
            static Job<int> Foo() => Job.FromResult(1);

            static int M(JobRuntime rt)
            {
                async Job<int> Local() { await Job.Delay(1); return {|MYR0003:Foo().Wait()|}; }
                return rt.Run(async () => { await Local(); return {|MYR0003:Foo().Wait()|}; });
            }
        }
        """);

    [Fact]
    public Task OutsideAsyncJob_NoDiagnostic() => Verify.Analyzer<BlockingInAsyncJobAnalyzer>("""
        class C
        {
            static Job<int> Foo() => Job.FromResult(1);

            static int Sync(Task<int> task) => Foo().Wait() + task.Result;

            static async Task<int> AsyncTask(Task<int> task) { await Task.Yield(); return task.Result + Foo().Wait(); }

            static async Job<int> NestedSyncLambda()
            {
                Func<int> f = () => Foo().Wait();
                await Job.Delay(1);
                return f();
            }
        }
        """);
}
