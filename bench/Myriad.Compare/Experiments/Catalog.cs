using System;
using System.Collections.Generic;

namespace Myriad.Compare.Experiments;

/// <summary>
/// Every experiment, its variants and its sizes. The default sizes and runs per size are chosen so
/// that a full run (with Go and NativeAOT) takes about 20 minutes on 2 cores; bench/README.md lists them.
/// </summary>
internal static class Catalog
{
    public static readonly IReadOnlyList<Experiment> All = WithAot(
    [
        new Experiment
        {
            Id = "recursion",
            Title = "E1: deep async recursion",
            Summary = "`n <= 0 ? 0 : 1 + await Count(n - 1)` on a thread with a 1 MiB stack. `tpl` is probed at increasing depths (each in its own child; a stack overflow kills the child) and the deepest depth that passed is timed; `tpl-deferred` queues every level with `Task.Factory.StartNew(...).Unwrap()`; `myriad` is `async Job<long>`. Depths differ per variant, so the ratios compare time per level, each against the myriad run of the nearest depth (myriad also runs at 10k and 100k for that).",
            Unit = "level",
            ComparePerOp = true,
            Variants =
            [
                new Variant { Id = "tpl", Description = "plain `async Task<int>`, deepest passing depth of 100, 200, 500, 1k, ... (one child per probe)", Run = Recursion.Tpl, ProbeDepth = true, DefaultCases = [new Case(1_000_000)], QuickCases = [new Case(20_000)] },
                new Variant { Id = "tpl-deferred", Description = "`1 + await Task.Factory.StartNew(s => Count((int)s - 1), n).Unwrap()` per level", Run = Recursion.TplDeferred, DefaultCases = [new Case(100_000)], QuickCases = [new Case(10_000)] },
                new Variant { Id = "myriad", Description = "`async Job<long>`, waited with `Wait()` on the 1 MiB thread (no runtime needed); also at 10k and 100k, the depths the TPL variants reach, so that time per level is compared at similar depths", Run = Recursion.Myriad, DefaultCases = [new Case(10_000), new Case(100_000), new Case(10_000_000)], QuickCases = [new Case(10_000), new Case(100_000)] },
            ],
            DefaultCases = [new Case(10_000_000)],
            QuickCases = [new Case(100_000)],
            Expected = c => c.N,
            WarmupN = c => Math.Max(1, Math.Min(c.N / 10, 1_000)),
        },
        new Experiment
        {
            Id = "chain-tasks",
            Title = "E2: chained tasks (task form)",
            Summary = "N workers; worker i awaits worker i-1's result and returns it + 1; the head is completed with 0 and the last must return N. Building the chain is measured.",
            Unit = "link",
            ReportsPeakPerUnit = true,
            Variants =
            [
                new Variant { Id = "tpl", Description = "`async Task<int>` that starts with `await Task.Yield()` (as published), driven from a plain thread", Run = ChainTasks.Tpl },
                new Variant { Id = "tpl-scheduler", Description = "`async Task<int>` without `Task.Yield`, built and run inside a dedicated 2-thread TaskScheduler (as published)", Run = ChainTasks.TplScheduler },
                new Variant { Id = "myriad", Description = "`async Job<int>` chained from a `Promise<int>`, built and run inside `MultiThreadRuntime` (2 workers)", Run = ChainTasks.Myriad },
                new Variant { Id = "myriad-spawn", Description = "the same, but every link spawned: `last = runtime.Spawn(last, static p => Link(p))`", Run = ChainTasks.MyriadSpawn },
                GoVariant("N goroutines, each one's result a `chan int` of capacity 1"),
            ],
            DefaultCases = [new Case(5_000), new Case(20_000), new Case(1_000_000)],
            QuickCases = [new Case(1_000), new Case(20_000)],
            Expected = c => c.N,
        },
        new Experiment
        {
            Id = "chain-channels",
            Title = "E2: chained workers over unbuffered channels (channel form)",
            Summary = "N+1 unbuffered channels; worker i receives from channel i, adds 1, sends to channel i+1; main sends 0 into the first and reads N from the last. Built as a daisy chain, as in the Go program: each channel is held only by the two workers that use it. Creating the N workers is measured.",
            Unit = "link",
            ReportsPeakPerUnit = true,
            Variants =
            [
                new Variant { Id = "tpl", Description = "`Channel.CreateBounded<int>(0)` (.NET 10 rendezvous) and plain `async Task` workers", Run = ChainChannels.Tpl },
                new Variant { Id = "tpl-array", Description = "the same, with the N+1 channels created first into an array (this tool's shape before it followed the Go program; kept because the TPL runs faster this way)", Run = ChainChannels.TplArray },
                new Variant { Id = "myriad", Description = "`Chan.Unbuffered<int>()` and `async Job` workers started by a direct call and handed to `runtime.Detach` (the tpl variant's shape), inside `MultiThreadRuntime`", Run = MyriadChannels.Chain },
                new Variant { Id = "myriad-spawn", Description = "the same, but each worker spawned with `runtime.SpawnDetached` (queued, like `go worker()`)", Run = MyriadChannels.ChainSpawned },
                GoVariant("classic daisy chain over unbuffered channels"),
            ],
            DefaultCases = [new Case(5_000), new Case(20_000), new Case(1_000_000)],
            QuickCases = [new Case(1_000), new Case(10_000)],
            Expected = c => c.N,
        },
        new Experiment
        {
            Id = "spawn",
            Title = "E3: spawning with state",
            Summary = "N jobs with state `struct { long A; long B; }` = {k, 1} returning A + B, in batches of 1000: spawn the batch, then await each and sum. The spawner runs inside the runtime.",
            Unit = "spawn",
            Variants =
            [
                new Variant { Id = "tpl-run", Description = "`Task.Run(() => s.A + s.B)` (a closure and a delegate per spawn), spawner on the thread pool", Run = Spawn.TplRun },
                new Variant { Id = "tpl-startnew", Description = "`Task.Factory.StartNew(static o => ..., (object)state, None, DenyChildAttach, Default)` (the struct boxes)", Run = Spawn.TplStartNew },
                new Variant { Id = "myriad", Description = "`runtime.Spawn(state, static s => new Job<long>(s.A + s.B))` from inside a job", Run = Spawn.Myriad },
                GoVariant("`go spawnJob(state{a: k, b: 1}, &slot, &wg)`, WaitGroup per batch"),
            ],
            DefaultCases = [new Case(1_000_000)],
            QuickCases = [new Case(20_000)],
            Expected = c => c.N * (c.N + 1) / 2,
        },
        new Experiment
        {
            Id = "async-overhead",
            Title = "E4: the price of an async method",
            Summary = "N calls of the same async method body (`Mix(await gate, i)`) with four return types. `sync`: the awaited gate is already complete, so the method completes synchronously. `suspend`: the gate is pending, the method suspends once and the driver (the producer, same thread) completes the gate, which resumes it inline. The gate is one allocation-free custom awaitable shared by all variants, so the differences are the method builders' own.",
            Unit = "call",
            Variants =
            [
                new Variant { Id = "tpl-task", Description = "`async Task<int>`", Run = AsyncOverhead.TplTask },
                new Variant { Id = "tpl-valuetask", Description = "`async ValueTask<int>`", Run = AsyncOverhead.TplValueTask },
                new Variant { Id = "tpl-pooled", Description = "`async ValueTask<int>` with `[AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]`", Run = AsyncOverhead.TplPooled },
                new Variant { Id = "myriad", Description = "`async Job<int>`", Run = AsyncOverhead.Myriad },
            ],
            DefaultCases = [new Case(2_000_000, AsyncOverhead.Sync), new Case(2_000_000, AsyncOverhead.Suspend)],
            QuickCases = [new Case(100_000, AsyncOverhead.Sync), new Case(100_000, AsyncOverhead.Suspend)],
            CasesForN = sizes => Expand(sizes, [AsyncOverhead.Sync, AsyncOverhead.Suspend], [0]),
            Expected = AsyncOverhead.Expected,
            WarmupN = c => Math.Max(1, Math.Min(c.N / 2, 200_000)),
        },
        new Experiment
        {
            Id = "tiny-tasks",
            Title = "E5: tiny tasks, sequential spawn-and-wait",
            Summary = "N sequential spawn-and-wait operations; each job does W increments of a shared counter (ops x work). `thread`: the spawner is a plain OS thread that blocks on each job (`Task.Run(...).GetAwaiter().GetResult()` as published, `runtime.Spawn(...).Wait()`, a goroutine locked to its OS thread); `runtime`: the spawner is async code on the runtime and awaits each job. CPU time shows how much the idle cores burn.",
            Unit = "op",
            Variants =
            [
                new Variant { Id = "tpl", Description = "thread: `Task.Run(() => ...).GetAwaiter().GetResult()`; runtime: `await Task.Run(() => ...)` inside an async method on the pool", Run = TinyTasks.Tpl },
                new Variant { Id = "myriad", Description = "thread: `runtime.Spawn(state, static s => ...).Wait()`; runtime: `await runtime.Spawn(...)` inside a job", Run = TinyTasks.Myriad },
                GoVariant("`go tinyJob(...); <-done`; thread mode: `runtime.LockOSThread()` first"),
            ],
            DefaultCases = TinyDefaults(),
            QuickCases = Expand([10_000], [TinyTasks.Thread, TinyTasks.InRuntime], [1]),
            CasesForN = sizes => Expand(sizes, [TinyTasks.Thread, TinyTasks.InRuntime], [1, 10, 100, 1000]),
            Expected = c => c.N * c.Work,
        },
        new Experiment
        {
            Id = "ping-pong",
            Title = "Ping-pong over unbuffered channels",
            Summary = "Two workers and two unbuffered channels, N round trips: the pinger sends i, the ponger replies i + 1, the pinger sums the replies.",
            Unit = "round trip",
            Variants =
            [
                new Variant { Id = "tpl", Description = "two `Channel.CreateBounded<int>(0)` and two plain `async Task` workers on the thread pool", Run = PingPong.Tpl },
                new Variant { Id = "myriad", Description = "two `Chan.Unbuffered<int>()`, ponger spawned on `MultiThreadRuntime`, pinger inside `runtime.Run`", Run = MyriadChannels.PingPong },
                GoVariant("two goroutines, two unbuffered channels"),
            ],
            DefaultCases = [new Case(1_000_000)],
            QuickCases = [new Case(10_000)],
            Expected = c => c.N * (c.N + 1) / 2,
        },
        new Experiment
        {
            Id = "echo",
            Title = "TCP echo on loopback",
            Summary = "An echo server and N clients in one process, each client making W round trips of a 64-byte message (TCP_NODELAY). Context switches of the measured run (voluntary + involuntary, from `getrusage(RUSAGE_SELF)`, which counts threads that exited) are listed under the table per round trip, and in the JSON metrics `ctx_switches` and `ctx_voluntary`. 9,900 clients rather than 10,000: each needs two descriptors in the process and the limit here is 20,000.",
            Unit = "round trip",
            UnitIsWork = true,
            Variants =
            [
                new Variant { Id = "tpl", Description = "plain `async Task` server and clients, `Socket.ReceiveAsync`/`SendAsync` on the thread pool", Run = Echo.Tpl },
                new Variant { Id = "myriad", Description = "the same code as `async Job` on `MultiThreadRuntime`, awaiting the same BCL socket operations", Run = Echo.Myriad },
                new Variant { Id = "myriad-native", Description = "`JobTcpListener`/`JobTcpConnection`: the runtime's own epoll driver, polled by its workers", Run = Echo.Native },
                GoVariant("a goroutine per connection and per client, `net.Conn` Read/Write (the netpoller)"),
            ],
            DefaultCases = [new Case(1_000, "", 1_000), new Case(9_900, "", 100)],
            QuickCases = [new Case(20, "", 50)],
            CasesForN = sizes => [.. System.Linq.Enumerable.Select(sizes, n => new Case(n, "", 200))],
            Expected = c => c.N * c.Work,
            WarmupN = c => Math.Max(1, Math.Min(c.N / 10, 100)),
        },
        new Experiment
        {
            Id = "spawn-tree",
            Title = "A 10-ary spawn tree",
            Summary = "A tree over N leaves: every node spawns one child per tenth of its range and awaits them in order; a leaf returns its number. The result is 0 + 1 + ... + (N-1). About 1.11 N spawns in all.",
            Unit = "leaf",
            Variants =
            [
                new Variant { Id = "tpl", Description = "`Task.Run(() => Node(lo, count))` per child, awaited in order, root on the thread pool", Run = SpawnTree.Tpl },
                new Variant { Id = "myriad", Description = "`runtime.Spawn((runtime, lo, count), static s => Node(...))` per child, awaited in order, root inside `runtime.Run`", Run = SpawnTree.Myriad },
                GoVariant("a goroutine per child, the children of a node send their sums on one channel per parent"),
            ],
            DefaultCases = [new Case(10_000), new Case(100_000), new Case(1_000_000)],
            QuickCases = [new Case(1_000), new Case(10_000)],
            Expected = SpawnTree.Expected,
        },
        new Experiment
        {
            Id = "cross-ping-pong",
            Title = "Ping-pong across two runtimes",
            Summary = "As ping-pong (N round trips over two unbuffered channels), but the pinger belongs to a single-threaded runtime driven by the child's main thread and the ponger to the multi-thread runtime, so every hop crosses from one runtime to the other. `myriad-same` is the same-runtime ping-pong program, for comparison within this table.",
            Unit = "round trip",
            Variants =
            [
                new Variant { Id = "tpl", Description = "pinger: `async Task` code on a thread with a single-threaded `SynchronizationContext` (as on a UI thread); ponger on the thread pool; two `Channel.CreateBounded<int>(0)`", Run = CrossRuntime.PingPongTpl },
                new Variant { Id = "myriad", Description = "pinger: a job of a `CurrentThreadRuntime` (`Run` on the main thread); ponger: spawned on the `MultiThreadRuntime`; two `Chan.Unbuffered<int>()`", Run = CrossRuntime.PingPongMyriad },
                new Variant { Id = "myriad-same", Description = "the ping-pong experiment's myriad program: both jobs on the `MultiThreadRuntime`", Run = MyriadChannels.PingPong },
                GoVariant("pinger locked to its OS thread (`runtime.LockOSThread`), ponger a plain goroutine, two unbuffered channels; every hop wakes an OS thread (about 27 us a round trip here), so by default only at 100k", [new Case(100_000)]),
            ],
            DefaultCases = [new Case(100_000), new Case(1_000_000)],
            QuickCases = [new Case(10_000)],
            Expected = c => c.N * (c.N + 1) / 2,
            DefaultRuns = c => c.N >= 1_000_000 ? 3 : null,
        },
        new Experiment
        {
            Id = "task-awaits-jobs",
            Title = "Plain async Task code awaiting jobs",
            Summary = "Ordinary `async Task` code (not a job), started on the child's main thread, awaits N jobs one after the other: `sum += await runtime.Spawn(i, static async x => { await Task.Yield(); return x; })`. Each job suspends once before it returns its number; the result is 0 + 1 + ... + (N-1).",
            Unit = "await",
            Variants =
            [
                new Variant { Id = "tpl", Description = "`sum += await Task.Run(async () => { await Task.Yield(); return x; })`", Run = CrossRuntime.AwaitJobsTpl },
                new Variant { Id = "myriad", Description = "`sum += await runtime.Spawn(i, static async x => { await Task.Yield(); return x; })` on the `MultiThreadRuntime`", Run = CrossRuntime.AwaitJobsMyriad },
                GoVariant("a goroutine per job that calls `runtime.Gosched()` once, then sends its number on a channel the caller receives from"),
            ],
            DefaultCases = [new Case(100_000)],
            QuickCases = [new Case(10_000)],
            Expected = CrossRuntime.AwaitJobsExpected,
        },
        new Experiment
        {
            Id = "worker-pool",
            Title = "A worker pool over one bounded channel",
            Summary = "P producers and C consumers share one channel of capacity K (`PxC/cap=K`; K = 0 is unbuffered). Producer p sends p, p + P, p + 2P, ... below N; consumers add up what they receive until the channel is closed after the last producer finished. The result is 0 + 1 + ... + (N-1).",
            Unit = "item",
            Variants =
            [
                new Variant { Id = "tpl", Description = "`Channel.CreateBounded<long>(K)` (.NET 10 accepts 0: a rendezvous), `WriteAsync`, `await foreach` over `ReadAllAsync`, `Writer.Complete()`; workers on the thread pool", Run = WorkerPool.Tpl },
                new Variant { Id = "myriad", Description = "`Chan.Bounded<long>(K)` (`Chan.Unbuffered<long>()` for 0), `SendAsync`, `await foreach` over `ReadAllAsync`, `Close()`; workers spawned on the `MultiThreadRuntime`", Run = WorkerPool.Myriad },
                GoVariant("`make(chan int64, K)`, producer and consumer goroutines, `for v := range ch`, `close` after a WaitGroup of the producers"),
            ],
            DefaultCases = Expand([1_000_000, 10_000_000], WorkerPoolModes, [0]),
            QuickCases = Expand([50_000], WorkerPoolModes, [0]),
            CasesForN = sizes => Expand(sizes, WorkerPoolModes, [0]),
            Expected = WorkerPool.Expected,
            DefaultRuns = c => c.N >= 10_000_000 ? 2 : 3,
        },
        new Experiment
        {
            Id = "sleepers",
            Title = "A crowd of sleepers",
            Summary = "N sleepers, started one after the other; each sleeps 1 s, notes its lateness (wake time - its own due time) in a preallocated array, and signals; the run ends when all have signalled. The result is the number of sleepers that woke. Lateness lines give the median, p99 and maximum, and for the .NET variants the garbage collector's pauses in the same run (no timer fires while a collection has the process suspended); peak WS per sleeper is the whole process's peak divided by N (the lateness array's 8 B per sleeper included).",
            Unit = "sleeper",
            ReportsPeakPerUnit = true,
            ReportsGcPauses = true,
            Variants =
            [
                new Variant { Id = "tpl", Description = "a plain `async Task` per sleeper: `await Task.Delay(1 s)`, then an `Interlocked` countdown that completes a `TaskCompletionSource`", Run = Sleepers.Tpl },
                new Variant { Id = "myriad", Description = "`runtime.SpawnDetached` per sleeper: `await Job.Delay(1 s)`, then `WaitGroup.Done()`; the spawner awaits `WaitAsync()`", Run = Sleepers.Myriad },
                GoVariant("a goroutine per sleeper: `time.Sleep(time.Second)`, then `wg.Done()`; `wg.Wait()`"),
            ],
            DefaultCases = [new Case(100_000), new Case(1_000_000), new Case(4_000_000)],
            QuickCases = [new Case(10_000)],
            Expected = c => c.N,
            WarmupN = c => Math.Max(1, Math.Min(c.N / 10, 10_000)),
            WarmupRounds = 1,
            DefaultRuns = c => c.N >= 4_000_000 ? 2 : 3,
        },
    ]);

    public static Experiment? Find(string id)
    {
        foreach (Experiment e in All)
        {
            if (string.Equals(e.Id, id, StringComparison.Ordinal))
            {
                return e;
            }
        }

        return null;
    }

    /// <summary>Shapes and capacities of the worker pool (a property: <see cref="All"/> is initialized first).</summary>
    private static string[] WorkerPoolModes =>
    [
        WorkerPool.Mode(4, 4, 1024),
        WorkerPool.Mode(1, 8, 1024),
        WorkerPool.Mode(4, 4, 0),
        WorkerPool.Mode(1, 8, 0),
    ];

    /// <summary>Id of the NativeAOT variant that every experiment with a myriad variant gets.</summary>
    public const string AotId = "myriad-aot";

    /// <summary>Adds a <c>myriad-aot</c> variant after every <c>myriad</c> variant: the same code, run by the NativeAOT build of the child.</summary>
    private static IReadOnlyList<Experiment> WithAot(IReadOnlyList<Experiment> experiments)
    {
        foreach (Experiment e in experiments)
        {
            if (e.FindVariant("myriad") is { } myriad)
            {
                e.InsertAfter(myriad, new Variant
                {
                    Id = AotId,
                    Kind = VariantKind.Aot,
                    Description = "the myriad code, compiled ahead of time: the child published with NativeAOT (`bench/Myriad.Compare.Aot`)",
                    Run = myriad.Run,
                    DefaultCases = myriad.DefaultCases,
                    QuickCases = myriad.QuickCases,
                });
            }
        }

        return experiments;
    }

    private static Variant GoVariant(string description, IReadOnlyList<Case>? defaultCases = null) =>
        new() { Id = "go", Kind = VariantKind.Go, Description = "Go: " + description, DefaultCases = defaultCases };

    /// <summary>Default E5 sizes: the published ops x work pairs scaled down (see the README: the thread mode costs tens of microseconds per op here).</summary>
    private static IReadOnlyList<Case> TinyDefaults()
    {
        var list = new List<Case>();
        foreach (string mode in new[] { TinyTasks.Thread, TinyTasks.InRuntime })
        {
            list.Add(new Case(1_000_000, mode, 1));
            list.Add(new Case(100_000, mode, 10));
            list.Add(new Case(10_000, mode, 100));
            list.Add(new Case(1_000, mode, 1_000));
        }

        return list;
    }

    private static IReadOnlyList<Case> Expand(IReadOnlyList<long> sizes, string[] modes, int[] works)
    {
        var list = new List<Case>();
        foreach (string mode in modes)
        {
            foreach (int work in works)
            {
                foreach (long n in sizes)
                {
                    list.Add(new Case(n, mode, work));
                }
            }
        }

        return list;
    }
}
