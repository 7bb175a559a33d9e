using System;
using System.Runtime.CompilerServices;

namespace Myriad.Scheduling;

/// <summary>
/// Settings of a <see cref="MultiThreadRuntime"/> (the single-threaded runtimes take the
/// <see cref="Name"/> and <see cref="TimeProvider"/>, and a <see cref="CurrentThreadRuntime"/> its
/// <see cref="IdleSpin"/>). Every tuning constant of the scheduler is here,
/// with its default and where that default comes from.
/// </summary>
public sealed class RuntimeOptions
{
    /// <summary>
    /// A copy for a runtime to keep: settings changed on the caller's object after the runtime was
    /// built must not reach it (the derived defaults, such as <see cref="MaxSearchingWorkers"/> from
    /// <see cref="WorkerCount"/>, would otherwise drift from the workers it actually has).
    /// </summary>
    internal RuntimeOptions Snapshot() => (RuntimeOptions)MemberwiseClone();

    private int _workerCount = Environment.ProcessorCount;
    private int _localQueueCapacity = 256;
    private int _globalQueueInterval = 61;
    private int _nextSlotBudget = 3;
    private int _ioPollInterval = 61;
    private int _searchRounds = 2;
    private int? _maxSearchingWorkers;

    /// <summary>Worker threads. Default: <see cref="Environment.ProcessorCount"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Less than 1 or more than 4096.</exception>
    public int WorkerCount
    {
        get => _workerCount;
        set => _workerCount = Check(value, 1, 4096);
    }

    /// <summary>The runtime's name in metrics; default: the type name and a number.</summary>
    public string? Name { get; set; }

    /// <summary>Prefix of the worker threads' names; the worker index is appended. Default "Myriad worker".</summary>
    /// <exception cref="ArgumentNullException">The value is null.</exception>
    public string ThreadNamePrefix
    {
        get => _threadNamePrefix;
        set => _threadNamePrefix = value ?? throw new ArgumentNullException(nameof(value), "A thread name prefix is required; use an empty string for names that are just the worker index.");
    }

    private string _threadNamePrefix = "Myriad worker";

    /// <summary>
    /// Capacity of each worker's run queue, a power of two. Default 256: the size Go's per-P run queue
    /// and Tokio's per-worker ring both settled on; large enough that overflow to the global queue is
    /// rare, small enough that a steal-half moves a cache-friendly batch.
    /// </summary>
    public int LocalQueueCapacity
    {
        get => _localQueueCapacity;
        set
        {
            Check(value, 2, 1 << 20);
            if ((value & (value - 1)) != 0)
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "LocalQueueCapacity must be a power of two.");
            }

            _localQueueCapacity = value;
        }
    }

    /// <summary>
    /// A worker takes from the global queue first every this many scheduler ticks, so that jobs
    /// which keep waking each other locally cannot starve work injected from outside. Default 61,
    /// Go's value (a prime, so the check does not fall into step with periodic workloads).
    /// </summary>
    public int GlobalQueueInterval
    {
        get => _globalQueueInterval;
        set => _globalQueueInterval = Check(value, 1, 1 << 20);
    }

    /// <summary>
    /// A busy worker polls the runtime's I/O driver (without blocking) every this many scheduler
    /// ticks, so that sockets that became ready are served while every worker stays busy (an idle
    /// worker polls anyway, blocking in the driver instead of parking). Default 61, Tokio's
    /// <c>event_interval</c>: frequent enough that I/O waits at most a few dozen jobs, rare enough that
    /// the system call (about a microsecond) stays under a few percent of a worker's time when jobs
    /// are tiny. Only runtimes that use Myriad's TCP types have a driver; see docs/io.md.
    /// </summary>
    public int IoPollInterval
    {
        get => _ioPollInterval;
        set => _ioPollInterval = Check(value, 1, 1 << 20);
    }

    /// <summary>
    /// How many jobs in a row a worker may take from its next-job (LIFO) slot before it must take
    /// from its queue. Default 3, Tokio's cap: enough for message-passing locality, bounded so that
    /// two jobs ping-ponging through the slot cannot starve the rest of the queue.
    /// </summary>
    public int NextSlotBudget
    {
        get => _nextSlotBudget;
        set => _nextSlotBudget = Check(value, 0, 1 << 20);
    }

    /// <summary>
    /// Rounds over all other workers' queues (each round followed by a short spin) that an idle
    /// worker makes before it parks. Default 2: bounded spinning, so that an idle core really idles
    /// (the .NET thread pool's longer spins are what makes tiny tasks burn every core, the tiny-tasks experiment of docs/experiments.md).
    /// </summary>
    public int SearchRounds
    {
        get => _searchRounds;
        set => _searchRounds = Check(value, 0, 1000);
    }

    /// <summary>
    /// Spin iterations (<see cref="System.Threading.Thread.SpinWait(int)"/>) between two search
    /// rounds, multiplied by the round number. Default 30: a few hundred nanoseconds, about the time
    /// a sibling needs to push the next item of a burst, far below the cost of parking and waking.
    /// </summary>
    public int SearchSpinIterations
    {
        get => _searchSpinIterations;
        set => _searchSpinIterations = Check(value, 0, 100_000);
    }

    private int _searchSpinIterations = 30;

    /// <summary>
    /// At most this many workers search other queues at once. Default: half the workers, at least one
    /// (Go and Tokio's rule): more searchers only contend on the same victims.
    /// </summary>
    public int MaxSearchingWorkers
    {
        get => _maxSearchingWorkers ?? Math.Max(1, _workerCount / 2);
        set => _maxSearchingWorkers = Check(value, 1, 4096);
    }

    /// <summary>
    /// How long a worker wake-up may be deferred when it is probably not needed (see the lazy-wake
    /// protocol in docs/design.md): a job spawned from a plain thread that will most likely run it
    /// itself by waiting for it, or a single job spawned by a worker that will most likely run it
    /// next itself. Default 1 ms: long enough that spawn-then-wait and spawn-then-await never wake
    /// a sibling, short against any human or I/O time scale. <see cref="TimeSpan.Zero"/> wakes a
    /// worker for every such spawn, as Go and Tokio do. Rounded up to whole milliseconds (the
    /// timer that pays deferred wakes ticks in milliseconds).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Negative or more than one second.</exception>
    public TimeSpan LazyWakeDelay
    {
        get => TimeSpan.FromMilliseconds(LazyWakeDelayMilliseconds);
        set
        {
            if (value < TimeSpan.Zero || value > TimeSpan.FromSeconds(1))
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "RuntimeOptions.LazyWakeDelay must be between zero and one second.");
            }

            LazyWakeDelayMilliseconds = (int)Math.Ceiling(value.TotalMilliseconds);
        }
    }

    internal int LazyWakeDelayMilliseconds { get; private set; } = 1;

    /// <summary>
    /// How long queued work may wait while every worker is busy before the runtime starts a spare
    /// thread to run it (see <see cref="MaxSpareThreads"/>). Default 20 ms: far longer than any
    /// item of a healthy job (microseconds), so ordinary load never starts one, and short enough that
    /// a job blocked on a task that needs this runtime costs a pause rather than a deadlock. Go's
    /// monitor takes a processor from a thread blocked in a system call after 20 µs to 10 ms; a
    /// spare thread costs more than Go's handoff, so the threshold is higher. Rounded up to whole
    /// milliseconds.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Less than 1 ms or more than one minute.</exception>
    public TimeSpan SpareThreadDelay
    {
        get => TimeSpan.FromMilliseconds(SpareThreadDelayMilliseconds);
        set
        {
            if (value < TimeSpan.FromMilliseconds(1) || value > TimeSpan.FromMinutes(1))
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "RuntimeOptions.SpareThreadDelay must be between 1 ms and one minute.");
            }

            SpareThreadDelayMilliseconds = (int)Math.Ceiling(value.TotalMilliseconds);
        }
    }

    internal int SpareThreadDelayMilliseconds { get; private set; } = 20;

    /// <summary>
    /// Spare threads a <see cref="MultiThreadRuntime"/> may run at once when its workers are all
    /// stuck in blocking calls (see <see cref="SpareThreadDelay"/>); each leaves once it has found no
    /// work for a whole delay. Default 64: enough for a burst of blocked jobs, while bounding the
    /// threads (and stacks) a runaway blocking pattern can create. 0 disables spares: a fixed-size
    /// pool that a blocked worker takes out of service.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Less than 0 or more than 4096.</exception>
    public int MaxSpareThreads
    {
        get => _maxSpareThreads;
        set => _maxSpareThreads = Check(value, 0, 4096);
    }

    private int _maxSpareThreads = 64;

    /// <summary>
    /// The backlog from which a spawn starts its job at once instead of queueing it. When a job
    /// running on one of the runtime's threads spawns, and the queue the new job would join already
    /// holds this many jobs that have not started (the worker's own run queue; for a thread that runs
    /// a job of the runtime while it waits for it, the runtime's global queue), the spawning thread
    /// runs the new job itself, up to its first suspension, and then continues. Default 256, the
    /// run queue's capacity (<see cref="LocalQueueCapacity"/>): a spawn that would overflow a full
    /// run queue runs instead. The other workers then still have a full queue to steal from, and a
    /// loop that spawns faster than the workers start jobs is held back to their pace instead of
    /// queueing millions of jobs, each held in memory until it starts (Cilk and Java's ForkJoin
    /// always run the child first; this is their rule, applied only under a backlog). 0 never runs a
    /// spawn at once: every spawn is queued, as in Go and Tokio, however long the queues grow. The
    /// worker's run queue counts as full at <see cref="LocalQueueCapacity"/> if that is lower.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Less than 0 or more than 2^20.</exception>
    public int SpawnInlineBacklog
    {
        get => _spawnInlineBacklog;
        set => _spawnInlineBacklog = Check(value, 0, 1 << 20);
    }

    private int _spawnInlineBacklog = 256;

    /// <summary>
    /// How long an idle worker, or the thread driving a <see cref="CurrentThreadRuntime"/>, spins
    /// watching for new work before it goes to sleep. Waking a sleeping thread costs a futex call on
    /// each side and a context switch, tens of microseconds on a virtual machine, while work handed
    /// to a thread that still spins starts within about a microsecond. It matters where work keeps
    /// crossing threads: a job on one runtime talking to a job on another, or <c>async Task</c> code
    /// awaiting jobs one by one. Default 50 µs: longer than such a round trip (a few microseconds
    /// when neither side sleeps), and short enough that an idle runtime spends a negligible amount of CPU
    /// (the .NET thread pool's workers also spin before they sleep, for the same reason).
    /// <see cref="TimeSpan.Zero"/> sleeps at once. A <see cref="DeterministicRuntime"/> never spins.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Negative or more than 10 ms.</exception>
    public TimeSpan IdleSpin
    {
        get => _idleSpin;
        set
        {
            if (value < TimeSpan.Zero || value > TimeSpan.FromMilliseconds(10))
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "RuntimeOptions.IdleSpin must be between zero and 10 ms.");
            }

            _idleSpin = value;
        }
    }

    /// <summary>The default of <see cref="IdleSpin"/>.</summary>
    internal static readonly TimeSpan DefaultIdleSpin = TimeSpan.FromMicroseconds(50);

    private TimeSpan _idleSpin = DefaultIdleSpin;

    /// <summary>
    /// Stack size of the worker threads (and spare threads) in bytes; 0 (the default) uses the
    /// platform default. Otherwise at least <see cref="MinThreadStackSize"/>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative, or between 0 and <see cref="MinThreadStackSize"/>.</exception>
    public int ThreadStackSize
    {
        get => _threadStackSize;
        set
        {
            if (value != 0 && value < MinThreadStackSize)
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, $"RuntimeOptions.ThreadStackSize must be 0 (the platform default) or at least {MinThreadStackSize} bytes.");
            }

            _threadStackSize = value;
        }
    }

    /// <summary>
    /// The smallest <see cref="ThreadStackSize"/> accepted: 128 KiB. A worker runs up to 48 nested
    /// levels of job code inline before the trampoline queues the rest, and an overflow ends the
    /// process rather than throwing: a trivial recursion needed about 48 KiB for those levels on
    /// x64 Linux (below 36 KiB even a one-level job crashed), so 128 KiB leaves room for the
    /// frames of the jobs' own code. It bounds one run of inline levels only: a job that blocks its
    /// worker in <c>Wait()</c> lets the worker run other jobs from that frame, each with 48 levels
    /// of its own, so nested blocking waits need a larger stack.
    /// </summary>
    public const int MinThreadStackSize = 128 * 1024;

    private int _threadStackSize;

    private TimeProvider? _timeProvider;

    /// <summary>
    /// The clock of the runtime's timers (<see cref="Job.Delay(TimeSpan, System.Threading.CancellationToken)"/>
    /// and select timeouts started on it). Default <see cref="TimeProvider.System"/>. Pass a fake clock
    /// (such as <c>FakeTimeProvider</c>) to control time in tests. Used by every runtime that takes
    /// options; a <see cref="DeterministicRuntime"/> given none uses its virtual clock.
    /// </summary>
    /// <exception cref="ArgumentNullException">The value is null.</exception>
    public TimeProvider TimeProvider
    {
        get => _timeProvider ?? TimeProvider.System;
        set => _timeProvider = value ?? throw new ArgumentNullException(nameof(value));
    }

    /// <summary>The provider set explicitly, or null when the default applies.</summary>
    internal TimeProvider? ExplicitTimeProvider => _timeProvider;

    private static int Check(int value, int min, int max, [CallerMemberName] string property = "")
    {
        if (value < min || value > max)
        {
            throw new ArgumentOutOfRangeException(nameof(value), value, $"RuntimeOptions.{property} must be between {min} and {max}.");
        }

        return value;
    }
}
