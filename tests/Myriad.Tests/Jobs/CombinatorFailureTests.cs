using System;
using System.Collections.Generic;
using System.Linq;
using Myriad.Coordination;
using Myriad.Tests.Support;
using Xunit;

namespace Myriad.Tests.Jobs;

/// <summary>WhenAll over sequences and every failure; WhenAll/WhenAny giving back the locks of results they drop.</summary>
public sealed class CombinatorFailureTests
{
    private static async Job<int> Pass(Job<int> source) => await source;

    private static async Job Untyped(Job<int> source) => await source;

    [Fact]
    public void WhenAll_Enumerable_SeveralFailures_FirstThrownAndAllReachable()
    {
        var jobs = new List<Job>
        {
            Job.FromException(new FormatException("a")),
            Job.CompletedJob,
            Job.FromException(new InvalidOperationException("b")),
        };
        var e = Assert.Throws<FormatException>(() => Job.WhenAll(jobs.Where(_ => true)).Wait());
        AggregateException all = Job.GetAllFailures(e);
        Assert.Equal(2, all.InnerExceptions.Count);
        Assert.Same(e, all.InnerExceptions[0]);
        Assert.IsType<InvalidOperationException>(all.InnerExceptions[1]);
    }

    [Fact]
    public void WhenAllT_Enumerable_AllSucceed_ResultsInOrder()
    {
        var promises = Enumerable.Range(0, 4).Select(_ => new Promise<int>()).ToArray();
        Job<int[]> all = Job.WhenAll(promises.Select(p => Pass(p.Job)));
        for (int i = promises.Length - 1; i >= 0; i--)
        {
            promises[i].SetResult(i * 10);
        }

        Assert.Equal([0, 10, 20, 30], Sync.Result(all));
    }

    [Fact]
    public void GetAllFailures_OrdinaryException_OneElementAggregate()
    {
        var e = new FormatException();
        Assert.Same(e, Assert.Single(Job.GetAllFailures(e).InnerExceptions));
        Assert.Throws<ArgumentNullException>(() => Job.GetAllFailures(null!));
    }

    [Fact]
    public void WhenAllT_FailureNextToAcquiredLock_LockGivenBack()
    {
        var mutex = new JobMutex();
        Job<JobMutex.Releaser> locked = mutex.LockAsync();
        Job<JobMutex.Releaser> failed = Job.FromException<JobMutex.Releaser>(new FormatException());
        Assert.Throws<FormatException>(() => Job.WhenAll(locked, failed).Wait());
        Assert.False(mutex.IsLocked);
    }

    [Fact]
    public void WhenAllT_FailureNextToPermit_PermitGivenBack()
    {
        var semaphore = new JobSemaphore(1, 1);
        Job<JobSemaphore.Releaser>[] jobs = [semaphore.AcquireAsync(), Job.FromException<JobSemaphore.Releaser>(new FormatException())];
        Assert.Throws<FormatException>(() => Job.WhenAll((IEnumerable<Job<JobSemaphore.Releaser>>)jobs).Wait());
        Assert.Equal(1, semaphore.CurrentCount);
    }

    [Fact]
    public void WhenAnyT_LosingAcquisition_LockGivenBack()
    {
        var mutex = new JobMutex();
        JobMutex.Releaser held = mutex.LockAsync().Wait();
        var timeout = new Promise<JobMutex.Releaser>();
        Job<(int Index, Job<JobMutex.Releaser> Winner)> race = Job.WhenAny(timeout.Job, mutex.LockAsync());
        timeout.SetResult(default); // the "timeout" wins while the lock is still held
        Assert.Equal(0, Sync.Result(race).Index);

        held.Dispose(); // the lock passes to the losing acquisition, which WhenAny disposes at once
        Assert.False(mutex.IsLocked);
    }

    [Fact]
    public void WhenAnyT_WinnerFails_NoThrowAndWinnerCarriesFailure()
    {
        var winner = new Promise<int>();
        var loser = new Promise<int>();
        Job<(int Index, Job<int> Winner)> race = Job.WhenAny(new[] { Pass(loser.Job), Pass(winner.Job) }.AsEnumerable());
        winner.SetException(new FormatException());
        (int index, Job<int> first) = Sync.Result(race);
        Assert.Equal(1, index);
        Assert.Throws<FormatException>(() => first.Wait());
        loser.SetResult(1);
    }

    [Fact]
    public void WhenAny_Enumerable_Empty_Throws()
    {
        Assert.Throws<ArgumentException>(() => Job.WhenAny(Enumerable.Empty<Job>()));
        Assert.Throws<ArgumentNullException>(() => Job.WhenAll((IEnumerable<Job>)null!));
    }
}
