using System;
using System.Threading;
using Myriad.Internal;

namespace Myriad.Scheduling;

public sealed partial class DeterministicRuntime
{
    private readonly TimeProvider? _explicitTimeProvider;
    private VirtualClock? _clock;

    /// <summary>
    /// Creates a runtime whose schedule is a function of <paramref name="seed"/>, named by
    /// <see cref="RuntimeOptions.Name"/>. An explicit <see cref="RuntimeOptions.TimeProvider"/> replaces
    /// the virtual clock (a <c>FakeTimeProvider</c> to advance by hand, say); without one the
    /// runtime keeps its virtual clock.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    public DeterministicRuntime(int seed, RuntimeOptions options)
        : this(seed, (options ?? throw new ArgumentNullException(nameof(options))).Name)
    {
        _explicitTimeProvider = options.ExplicitTimeProvider;
    }

    /// <summary>
    /// Creates a runtime whose schedule is a function of <paramref name="seed"/> and
    /// <paramref name="strategy"/> (see <see cref="ScheduleStrategy"/>), named and clocked by
    /// <paramref name="options"/> as <see cref="DeterministicRuntime(int, RuntimeOptions)"/> is.
    /// </summary>
    /// <inheritdoc cref="DeterministicRuntime(int, ScheduleStrategy, int, int, string?)"/>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    public DeterministicRuntime(int seed, ScheduleStrategy strategy, RuntimeOptions options, int priorityChangePoints = 2, int stepHorizon = DefaultStepHorizon)
        : this(seed, strategy, priorityChangePoints, stepHorizon, (options ?? throw new ArgumentNullException(nameof(options))).Name)
    {
        _explicitTimeProvider = options.ExplicitTimeProvider;
    }

    /// <summary>
    /// The runtime's clock: unless options gave another, a virtual clock that starts at
    /// 2000-01-01 00:00 UTC and moves when nothing can run (or after a million steps without the run
    /// going idle, so that a job polling in a loop of yields for a timer's effect does not hold it
    /// still), straight to the next pending timer
    /// (so <c>await Job.Delay(TimeSpan.FromHours(1))</c> completes at once in real time, an hour later
    /// in virtual time). Timers due at the same virtual instant fire in an order drawn from
    /// <see cref="Seed"/>. Pass it to code that takes a <see cref="System.TimeProvider"/>, so that its
    /// timers and its notion of now are virtual too.
    /// </summary>
    public override TimeProvider TimeProvider => _explicitTimeProvider ?? Clock;

    /// <summary>The runtime's current time: <see cref="TimeProvider"/>'s <see cref="TimeProvider.GetUtcNow"/>.</summary>
    public DateTimeOffset Now => TimeProvider.GetUtcNow();

    private VirtualClock Clock
    {
        get
        {
            VirtualClock? clock = Volatile.Read(ref _clock);
            return clock ?? Interlocked.CompareExchange(ref _clock, new VirtualClock(this, Seed), null) ?? _clock!;
        }
    }

    /// <summary>Nothing is runnable: the virtual clock jumps to the next timer and queues what falls due then.</summary>
    private protected override bool AdvanceIdleClock()
    {
        _stepsAtClockMove = Steps;
        return Volatile.Read(ref _clock) is { } clock && clock.TryAdvance();
    }

    /// <summary><see cref="Steps"/> when the clock last moved, or was last asked to (idle).</summary>
    private long _stepsAtClockMove;

    /// <summary>
    /// After <see cref="MyriadDefaults.BusyClockSteps"/> steps without going idle, the clock moves to the
    /// next pending timer, if any, as if the run had gone idle: a job that polls in a loop of yields would
    /// otherwise keep it still forever. Steps are counted by the schedule, so this is the seed's too.
    /// </summary>
    private protected override void AfterStep()
    {
        if (Steps - _stepsAtClockMove >= MyriadDefaults.BusyClockSteps)
        {
            AdvanceIdleClock();
        }
    }
}
