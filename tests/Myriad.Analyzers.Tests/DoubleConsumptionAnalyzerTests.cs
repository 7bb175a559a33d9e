using System.Threading.Tasks;
using Xunit;

namespace Myriad.Analyzers.Tests;

public class DoubleConsumptionAnalyzerTests
{
    [Fact]
    public Task Await_SameLocalTwiceOrAfterWaitAsync_Reports() => Verify.Analyzer<DoubleConsumptionAnalyzer>("""
        class C
        {
            static Job<int> Foo() => Job.FromResult(1);

            static async Job<int> M()
            {
                Job<int> j = Foo();
                int a = await j;
                int b = await {|MYR0002:j|};
                return a + b;
            }

            static async Job<int> AfterWaitAsync()
            {
                Job<int> j = Foo();
                int a = await j.WaitAsync(System.TimeSpan.FromSeconds(1)); // consumes j
                return a + await {|MYR0002:j|};
            }
        }
        """);

    [Fact]
    public Task AsTask_AfterAwaitOrTwice_Reports() => Verify.Analyzer<DoubleConsumptionAnalyzer>("""
        class C
        {
            static async Job M(Job j, Job k)
            {
                await j;
                Task t = {|MYR0002:j|}.AsTask();
                Task u = k.AsTask();
                Task v = {|MYR0002:k|}.AsTask();
                await Task.WhenAll(t, u, v);
            }
        }
        """);

    [Fact]
    public Task Loop_AwaitWithoutReassignment_Reports() => Verify.Analyzer<DoubleConsumptionAnalyzer>("""
        class C
        {
            static async Job M(Job j, int n)
            {
                for (int i = 0; i < n; i++)
                {
                    await {|MYR0002:j|};
                }
            }
        }
        """);

    [Fact]
    public Task WhenAll_SameJobTwice_Reports() => Verify.Analyzer<DoubleConsumptionAnalyzer>("""
        class C
        {
            static Job M(Job j) => Job.WhenAll(j, {|MYR0002:j|});
        }
        """);

    [Fact]
    public Task SeparatePaths_Reassignment_Loops_NoDiagnostic() => Verify.Analyzer<DoubleConsumptionAnalyzer>("""
        class C
        {
            static Job<int> Foo() => Job.FromResult(1);

            static async Job<int> M(bool c, Job<int>[] jobs, JobRuntime rt)
            {
                Job<int> j = Foo();
                int total = c ? await j : j.Wait();
                j = Foo();
                if (c)
                {
                    total += await j;
                }
                else
                {
                    rt.Detach(j);
                }

                j = Foo();
                total += await j;
                j = Foo();
                if (total > 3)
                {
                    return await j;
                }

                total += await j;
                foreach (Job<int> job in jobs)
                {
                    total += await job;
                }

                foreach ((Job<int> job, int id) in new[] { (Foo(), 1), (Foo(), 2) })
                {
                    total += job.Wait() + id;
                }

                (Job<int> first, Job<int> second) = (Foo(), Foo());
                total += await first + await second;
                for (int i = 0; i < 2; i++)
                {
                    (first, _) = (Foo(), 0);
                    total += await first;
                }

                for (int i = 0; i < 3; i++)
                {
                    Job<int> k = Foo();
                    total += await k;
                }

                Job<int> late = Foo();
                Func<Job<int>> f = () => late;
                total += await late;
                return total + await f();
            }
        }
        """);

    [Fact]
    public Task PatternVariable_DeclaredInLoop_NoDiagnostic() => Verify.Analyzer<DoubleConsumptionAnalyzer>("""
        using System.Collections.Generic;

        record Item(int Id, Job<int> Work);

        class C
        {
            static async Job<int> M(object[] items, List<Item> list, Queue<object> queue, Func<(bool, Job<int>)> next)
            {
                int sum = 0;
                foreach (object item in items)
                {
                    if (item is Job<int> job)
                    {
                        sum += await job;
                    }
                }

                foreach (object item in items)
                {
                    switch (item)
                    {
                        case Job<int> j:
                            sum += await j;
                            break;
                    }
                }

                while (next() is (true, var j))
                {
                    sum += await j;
                }

                foreach (Item it in list)
                {
                    if (it is { Work: var w })
                    {
                        sum += await w;
                    }
                }

                while (queue.TryDequeue(out var o) && o is Job<int> j)
                {
                    sum += await j;
                }

                foreach (Item it in list)
                {
                    if (it is not { Work: var w })
                    {
                        continue;
                    }

                    sum += await w;
                }

                foreach (object item in items)
                {
                    if (item is Job<int> { IsCompleted: true } done)
                    {
                        sum += done.Wait();
                    }
                }

                return sum;
            }
        }
        """);

    [Fact]
    public Task PatternVariable_ConsumedTwice_Reports() => Verify.Analyzer<DoubleConsumptionAnalyzer>("""
        class C
        {
            static async Job<int> M(object item)
            {
                if (item is Job<int> job)
                {
                    int a = await job;
                    return a + await {|MYR0002:job|};
                }

                return 0;
            }
        }
        """);

    [Fact]
    public Task ConfigureAwait_SameLocalTwice_Reports() => Verify.Analyzer<DoubleConsumptionAnalyzer>("""
        class C
        {
            static Job<int> Work(int n) => Job.FromResult(n);

            static async Job<int> M(Job k)
            {
                Job<int> job = Work(1);
                int a = await job.ConfigureAwait(false);
                int b = await {|MYR0002:job|}.ConfigureAwait(false);
                await k;
                await {|MYR0002:k|}.ConfigureAwait(false);
                return a + b;
            }
        }
        """);
}
