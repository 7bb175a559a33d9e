using System.Linq;
using Myriad.Diagnostics;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Diagnostics;

[Collection(HeavyCollection.Name)]
public class JobDiagnosticsTests
{
    private static async Job<int> Outer(Job<int> inner) => await Middle(inner) + 1;

    private static async Job<int> Middle(Job<int> inner) => await inner + 1;

    [Fact]
    public void Snapshot_ShowsSuspendedJobsAndWhatEachAwaits()
    {
        JobDiagnostics.TrackLiveJobs = true;
        try
        {
            var promise = new Promise<int>();
            Job<int> outer = Outer(promise.Job);

            var live = JobDiagnostics.Snapshot();
            LiveJob middle = Assert.Single(live, j => j.Method.EndsWith("Middle"));
            LiveJob outerJob = Assert.Single(live, j => j.Method.EndsWith("Outer"));
            Assert.False(middle.IsCompleted);
            Assert.Equal(middle.Id, outerJob.AwaitingJobId);
            Assert.Contains($"job #{middle.Id}", outerJob.Awaiting);
            Assert.Contains("Promise<Int32>", middle.Awaiting);
            Assert.Contains("Middle", JobDiagnostics.Dump());

            promise.SetResult(1);
            Assert.Equal(3, outer.Wait());
            Assert.DoesNotContain(JobDiagnostics.Snapshot(), j => j.Id == middle.Id || j.Id == outerJob.Id);
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }

    private static async Job<int> AwaitTask(System.Threading.Tasks.Task<int> task) => await task + 1;

    [Fact]
    public void Snapshot_JobSuspendedOnTask_SaysItAwaitsANonMyriadAwaitable()
    {
        JobDiagnostics.TrackLiveJobs = true;
        try
        {
            var source = new System.Threading.Tasks.TaskCompletionSource<int>();
            Job<int> job = AwaitTask(source.Task);
            LiveJob live = Assert.Single(JobDiagnostics.Snapshot(), j => j.Method.EndsWith("AwaitTask"));
            Assert.Contains("non-Myriad awaitable", live.Awaiting);
            source.SetResult(1);
            Assert.Equal(2, job.Wait());
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }

    private static async Job<int> SumAll(Myriad.Channels.Chan<int> channel)
    {
        int sum = 0;
        await foreach (int item in channel.ReadAllAsync())
        {
            sum += item;
        }

        return sum;
    }

    [Fact]
    public void Snapshot_JobInAwaitForeachOverReadAllAsync_NamesTheChannel()
    {
        JobDiagnostics.TrackLiveJobs = true;
        try
        {
            var channel = Myriad.Channels.Chan.Unbounded<int>();
            Job<int> job = SumAll(channel);
            LiveJob live = Assert.Single(JobDiagnostics.Snapshot(), j => j.Method.EndsWith("SumAll"));
            Assert.Contains("Chan<Int32>.ReadAllAsync", live.Awaiting);
            Assert.DoesNotContain("non-Myriad", live.Awaiting);
            channel.TrySend(5);
            channel.Close();
            Assert.Equal(5, job.Wait());
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }

    /// <summary>An awaiter with no fields (like Task.Yield's): its pending await leaves nothing in the state machine's awaiter field.</summary>
    private readonly struct FieldlessAwaitable : System.Runtime.CompilerServices.ICriticalNotifyCompletion
    {
        internal static System.Action? Pending;

        public FieldlessAwaitable GetAwaiter() => this;

        public bool IsCompleted => false;

        public void GetResult()
        {
        }

        public void OnCompleted(System.Action continuation) => Pending = continuation;

        public void UnsafeOnCompleted(System.Action continuation) => Pending = continuation;
    }

    private static async Job<int> AwaitFieldless()
    {
        await default(FieldlessAwaitable);
        return 7;
    }

    [Fact]
    public void Snapshot_JobSuspendedOnFieldlessAwaiter_StillSaysNonMyriadAwaitable()
    {
        JobDiagnostics.TrackLiveJobs = true;
        try
        {
            Job<int> job = AwaitFieldless();
            LiveJob live = Assert.Single(JobDiagnostics.Snapshot(), j => j.Method.EndsWith("AwaitFieldless"));
            Assert.Contains("non-Myriad awaitable", live.Awaiting);
            System.Action resume = FieldlessAwaitable.Pending!;
            FieldlessAwaitable.Pending = null;
            resume();
            Assert.Equal(7, job.Wait());
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }

    [Fact]
    public void TrackingOff_SnapshotIsEmptyOfNewJobs()
    {
        JobDiagnostics.TrackLiveJobs = false;
        var promise = new Promise<int>();
        Job<int> outer = Outer(promise.Job);
        Assert.DoesNotContain(JobDiagnostics.Snapshot(), j => j.Method.EndsWith("Outer"));
        promise.SetResult(0);
        Assert.Equal(2, outer.Wait());
    }

    [Fact]
    public void Snapshot_JobAwaitingAStartedSpawnedJob_PointsAtThatJob()
    {
        static async Job<int> Waiter(Job<int> inner) => await inner + 1;

        JobDiagnostics.TrackLiveJobs = true;
        using var runtime = new Myriad.Scheduling.CurrentThreadRuntime();
        try
        {
            var promise = new Promise<int>();
            Job<int> spawned = runtime.Spawn(promise, static async p => await p.Job);
            Job<int> waiter = Waiter(spawned);
            runtime.RunUntilIdle(); // the lambda starts and suspends on the promise

            var live = JobDiagnostics.Snapshot();
            LiveJob lambda = Assert.Single(live, j => j.Method.StartsWith("lambda in ", System.StringComparison.Ordinal) && j.Method.EndsWith(nameof(Snapshot_JobAwaitingAStartedSpawnedJob_PointsAtThatJob), System.StringComparison.Ordinal));
            LiveJob waiting = Assert.Single(live, j => j.Method.EndsWith(".Waiter", System.StringComparison.Ordinal) && j.Method.Contains(nameof(Snapshot_JobAwaitingAStartedSpawnedJob_PointsAtThatJob), System.StringComparison.Ordinal));
            Assert.Equal(lambda.Id, waiting.AwaitingJobId);
            Assert.Equal($"job #{lambda.Id} ({lambda.Method})", waiting.Awaiting);

            promise.SetResult(1);
            runtime.RunUntilIdle();
            Assert.Equal(2, waiter.Wait());
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }

    [Fact]
    public void Snapshot_LocalFunctionAndSpawnedLambda_HaveReadableNames()
    {
        static async Job<int> Waiter(Job<int> inner) => await inner + 1;

        JobDiagnostics.TrackLiveJobs = true;
        using var runtime = new Myriad.Scheduling.CurrentThreadRuntime();
        try
        {
            var promise = new Promise<int>();
            Job<int> spawned = runtime.Spawn(promise, static async p => await p.Job);
            Job<int> waiter = Waiter(spawned); // suspends on the spawned job, which has not started

            LiveJob live = Assert.Single(JobDiagnostics.Snapshot(), j => j.Method.EndsWith(".Waiter", System.StringComparison.Ordinal));
            Assert.Equal("JobDiagnosticsTests.Snapshot_LocalFunctionAndSpawnedLambda_HaveReadableNames.Waiter", live.Method);
            Assert.Equal("spawned lambda in Snapshot_LocalFunctionAndSpawnedLambda_HaveReadableNames", live.Awaiting);

            runtime.RunUntilIdle(); // the lambda starts and suspends on the promise
            Assert.Contains(JobDiagnostics.Snapshot(), j => j.Method == "lambda in JobDiagnosticsTests.Snapshot_LocalFunctionAndSpawnedLambda_HaveReadableNames");

            promise.SetResult(1);
            runtime.RunUntilIdle();
            Assert.Equal(2, waiter.Wait());
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }

    [Fact]
    public void Snapshot_JobsInCombinators_NameThePublicOperationNotItsHelpers()
    {
        static async Job AwaitAny(Job a, Job b) => await Job.WhenAny(a, b);

        JobDiagnostics.TrackLiveJobs = true;
        try
        {
            var gate = new Promise<(int, string)>();
            var other = new Promise<int>();
            Job waiter = AwaitAny(gate.Job.AsJob(), other.Job.AsJob());

            var live = JobDiagnostics.Snapshot();
            LiveJob awaiting = Assert.Single(live, j => j.Method.EndsWith(".AwaitAny", System.StringComparison.Ordinal));
            Assert.Equal("Job.WhenAny", awaiting.Awaiting);
            Assert.Contains(live, j => j.Method == "Job<T>.AsJob" && j.Awaiting == "Promise<(Int32, String)>");
            string dump = JobDiagnostics.Dump();
            Assert.DoesNotContain("Adapters", dump);
            Assert.DoesNotContain("ObserveAsync", dump);
            Assert.DoesNotContain("`", dump);

            other.SetResult(1);
            waiter.Wait();
            gate.SetResult((1, "x"));
        }
        finally
        {
            JobDiagnostics.TrackLiveJobs = false;
        }
    }
}
