using System;
using System.Collections.Generic;
using System.Runtime.ExceptionServices;
using System.Threading;
using Myriad.Jobs;

namespace Myriad;

public readonly partial struct Job
{
    /// <summary>
    /// Completes when every job has completed; consumes all of them. If any failed, throws the first
    /// failure (in argument order) once all have completed, so that every job's pooled state is released.
    /// </summary>
    /// <remarks>The handles are copied before this returns, as <c>Task.WhenAll</c> copies its array:
    /// the caller may reuse <paramref name="jobs"/> at once.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    public static Job WhenAll(params Job[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        return WhenAllCore(CopyOf(jobs));
    }

    /// <summary>Completes with every job's result, in argument order; consumes all of them.</summary>
    /// <remarks>The handles are copied before this returns: the caller may reuse <paramref name="jobs"/> at once.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    public static Job<T[]> WhenAll<T>(params Job<T>[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        return WhenAllCore(CopyOf(jobs));
    }

    /// <summary>
    /// The cores read each handle only after the previous one completed, which may be long after the
    /// call returned; by then the caller may have reused its array for other jobs, and the jobs it
    /// gave would never be awaited (their failures lost, their pooled boxes never recycled).
    /// </summary>
    private static TJob[] CopyOf<TJob>(TJob[] jobs) => jobs.Length == 0 ? jobs : (TJob[])jobs.Clone();

    private static async Job WhenAllCore(Job[] jobs)
    {
        ExceptionDispatchInfo? first = null;
        foreach (Job job in jobs)
        {
            try
            {
                await job;
            }
            catch (Exception e)
            {
                first ??= ExceptionDispatchInfo.Capture(e);
            }
        }

        first?.Throw();
    }

    private static async Job<T[]> WhenAllCore<T>(Job<T>[] jobs)
    {
        var results = new T[jobs.Length];
        ExceptionDispatchInfo? first = null;
        for (int i = 0; i < jobs.Length; i++)
        {
            try
            {
                results[i] = await jobs[i];
            }
            catch (Exception e)
            {
                first ??= ExceptionDispatchInfo.Capture(e);
            }
        }

        first?.Throw();
        return results;
    }

    /// <summary>
    /// Completes with the index of the first job to complete. Jobs are single-use, so WhenAny consumes
    /// them all: the winner's failure is rethrown by the returned job, the others are awaited in the
    /// background and their outcomes discarded.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="jobs"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="jobs"/> is empty.</exception>
    public static Job<int> WhenAny(params Job[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        if (jobs.Length == 0)
        {
            throw new ArgumentException("WhenAny needs at least one job.", nameof(jobs));
        }

        var race = new Promise<int>();
        for (int i = 0; i < jobs.Length; i++)
        {
            _ = ObserveAsync(jobs[i], i, race);
        }

        return race.Job;
    }

    /// <summary>Completes with the index and result of the first job to complete; see <see cref="WhenAny(Job[])"/>.</summary>
    public static Job<(int Index, T Result)> WhenAny<T>(params Job<T>[] jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        if (jobs.Length == 0)
        {
            throw new ArgumentException("WhenAny needs at least one job.", nameof(jobs));
        }

        var race = new Promise<(int, T)>();
        for (int i = 0; i < jobs.Length; i++)
        {
            _ = ObserveAsync(jobs[i], i, race);
        }

        return race.Job;
    }

    private static async Job ObserveAsync(Job job, int index, Promise<int> race)
    {
        try
        {
            await job;
            race.TrySetResult(index);
        }
        catch (Exception e)
        {
            race.TrySetException(e);
        }
    }

    private static async Job ObserveAsync<T>(Job<T> job, int index, Promise<(int, T)> race)
    {
        try
        {
            T result = await job;
            race.TrySetResult((index, result));
        }
        catch (Exception e)
        {
            race.TrySetException(e);
        }
    }
}
