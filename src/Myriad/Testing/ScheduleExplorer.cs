using System;
using System.Collections.Generic;
using System.Runtime.ExceptionServices;
using Myriad.Scheduling;

namespace Myriad.Testing;

/// <summary>
/// Runs a test body under many schedules, each on a fresh <see cref="DeterministicRuntime"/> of its
/// own seed, and stops at the first failure with the seed and the one line that replays it: a
/// concurrency bug that shows once in a thousand real runs shows here within a few hundred seeds,
/// and then every time.
/// </summary>
/// <remarks>
/// <para>A run fails when the body throws or returns a faulted job, when a detached job of the run
/// (<see cref="JobRuntime.SpawnDetached(Func{Job}, System.Threading.CancellationToken)"/>,
/// <see cref="JobRuntime.Detach(Job)"/>) fails while the run goes on, or when it can never finish
/// (<see cref="DeadlockException"/>). Several failures in one run are reported together as an
/// <see cref="AggregateException"/>, the detached jobs' first. The body must touch no outside threads or I/O (its timers run
/// on the runtime's virtual clock), so that its run is a function of the seed alone.</para>
/// <para>Two strategies (<see cref="ScheduleStrategy"/>): uniform random choice at every step, and
/// PCT's priorities with a few change points, which finds a bug of small depth with a probability
/// known in advance. Run both: they find different bugs first.</para>
/// </remarks>
/// <example>
/// <code>
/// ScheduleExplorer.Explore(async runtime =>
/// {
///     int count = 0;
///     Job Increment() => runtime.Spawn(async () => { int seen = count; await Task.Yield(); count = seen + 1; });
///     await Job.WhenAll(Increment(), Increment());
///     if (count != 2) throw new InvalidOperationException($"lost an update: {count}");
/// });
/// </code>
/// </example>
public static class ScheduleExplorer
{
    /// <summary>
    /// Runs <paramref name="body"/> once per seed of <paramref name="options"/> (100 seeds from 0
    /// with random schedules by default) and returns how many runs passed.
    /// </summary>
    /// <param name="body">The test: it gets the run's runtime (to spawn on) and returns the job the run waits for.</param>
    /// <param name="options">Seeds and strategy; null for the defaults.</param>
    /// <returns>The number of runs, all passed.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    /// <exception cref="ScheduleExplorationException">A run failed: its seed, strategy and replay line, with the failure inside.</exception>
    public static int Explore(Func<DeterministicRuntime, Job> body, ExplorationOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(body);
        options ??= new ExplorationOptions();
        options.Validate();

        int horizon = options.StepHorizon ?? ExplorationOptions.InitialStepHorizon;
        for (int i = 0; i < options.Seeds; i++)
        {
            int seed = options.FirstSeed + i;
            long steps;
            try
            {
                steps = RunOnce(body, seed, options.Strategy, options.PriorityChangePoints, horizon);
            }
            catch (Exception failure)
            {
                throw new ScheduleExplorationException(seed, options.Strategy, options.PriorityChangePoints, horizon, i + 1, failure);
            }

            if (options.StepHorizon is null && steps > horizon && horizon < options.MaxStepHorizon)
            {
                // Coyote's prioritized strategy does the same: PCT's probability bound holds for a
                // horizon at least the run's length, which is only known once runs were seen. A
                // run past twice the horizon went random there, either because the body is that
                // long or because a job polled (see ScheduleStrategy.Priority). The two cannot be
                // told apart, and ignoring such runs kept the horizon at its first value for every
                // body over twice that long, with all change points among its first steps. So the
                // run's length is taken either way; a polling body then lengthens every run, and
                // MaxStepHorizon bounds that.
                horizon = (int)Math.Min(steps, options.MaxStepHorizon);
            }
        }

        return options.Seeds;
    }

    /// <summary>
    /// Replays one run of <see cref="Explore"/>: the line a <see cref="ScheduleExplorationException"/>
    /// gives. The failure is rethrown as is (for a debugger to stop on); the run is the same as the
    /// failing one as long as the body is.
    /// </summary>
    /// <param name="body">The same test body.</param>
    /// <param name="seed">The failing seed.</param>
    /// <param name="strategy">The failing run's strategy.</param>
    /// <param name="priorityChangePoints">The failing run's change points (for <see cref="ScheduleStrategy.Priority"/>).</param>
    /// <param name="stepHorizon">The failing run's step horizon (for <see cref="ScheduleStrategy.Priority"/>).</param>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is null.</exception>
    public static void Replay(Func<DeterministicRuntime, Job> body, int seed, ScheduleStrategy strategy = ScheduleStrategy.Random, int priorityChangePoints = 2, int stepHorizon = ExplorationOptions.InitialStepHorizon)
    {
        ArgumentNullException.ThrowIfNull(body);
        RunOnce(body, seed, strategy, priorityChangePoints, stepHorizon);
    }

    private static long RunOnce(Func<DeterministicRuntime, Job> body, int seed, ScheduleStrategy strategy, int priorityChangePoints, int stepHorizon)
    {
        using var runtime = new DeterministicRuntime(seed, strategy, priorityChangePoints, stepHorizon, nameof(ScheduleExplorer));
        var detached = new DetachedFailures();
        runtime.UnobservedException += detached.Record;
        try
        {
            runtime.Run((body, runtime), static s => s.body(s.runtime));
        }
        catch (Exception failure) when (detached.Any)
        {
            detached.Throw(failure);
        }

        // Checked before the disposal, which cancels jobs still queued: those were cut short by the
        // end of the run, they did not fail.
        detached.Throw(null);
        return runtime.Steps;
    }

    /// <summary>
    /// Failures of the run's detached jobs (<c>SpawnDetached</c>, <c>Detach</c>): nobody awaits those
    /// jobs, so their exceptions reach only <see cref="JobRuntime.UnobservedException"/>, and a test
    /// that asserts inside one would otherwise pass on every seed. They are raised on the driving
    /// thread in the order the schedule completes the jobs, so they replay with the seed.
    /// </summary>
    private sealed class DetachedFailures
    {
        private readonly List<Exception> _failures = [];

        internal bool Any
        {
            get
            {
                lock (_failures)
                {
                    return _failures.Count > 0;
                }
            }
        }

        /// <summary>The event handler: it must not throw (its exception would go to the thread pool), so it only records.</summary>
        internal void Record(object? sender, UnobservedJobExceptionEventArgs e)
        {
            lock (_failures)
            {
                _failures.Add(e.Exception);
            }
        }

        /// <summary>
        /// Throws the run's failure, if it has one: a single detached failure as itself (stack trace
        /// kept), or an <see cref="AggregateException"/> of the detached failures followed by
        /// <paramref name="runFailure"/> (a deadlock is often only the consequence of a job that died).
        /// </summary>
        internal void Throw(Exception? runFailure)
        {
            List<Exception> all;
            lock (_failures)
            {
                all = [.. _failures];
            }

            if (runFailure is not null)
            {
                all.Add(runFailure);
            }

            if (all.Count == 1)
            {
                ExceptionDispatchInfo.Throw(all[0]);
            }

            if (all.Count > 1)
            {
                throw new AggregateException(all);
            }
        }
    }
}
