// Command gobench runs the Go counterparts of the compare tool's experiments
// (bench/README.md) and prints one JSON line with the measurements, for the .NET
// compare tool to parse.
//
//	gobench -exp ID -n N [-work W] [-mode runtime|thread|PxC/cap=K] [-warmup N2]
//
// Exit codes: 0 result ok, 2 bad arguments, 3 wrong result.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

// config is what an experiment needs to run once.
type config struct {
	n    int
	work int    // increments per job (tiny-tasks only)
	mode string // tiny-tasks: "runtime" or "thread"; worker-pool: "PxC/cap=K"
}

// experiment runs once with cfg and returns the computed and the expected result.
type experiment func(cfg config) (result, expected int64)

var experiments = map[string]experiment{
	"chain-tasks":      chainTasks,
	"chain-channels":   chainChannels,
	"spawn":            spawn,
	"tiny-tasks":       tinyTasks,
	"ping-pong":        pingPong,
	"spawn-tree":       spawnTree,
	"cross-ping-pong":  crossPingPong,
	"task-awaits-jobs": awaitJobs,
	"worker-pool":      workerPool,
	"sleepers":         sleepers,
	"echo":             echo,
}

func usageError(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gobench: "+format+"\n", args...)
	flag.Usage()
	os.Exit(2)
}

func main() {
	exp := flag.String("exp", "", "experiment id: "+strings.Join(experimentIDs(), ", "))
	n := flag.Int("n", 0, "problem size (number of jobs / links / round trips), >= 1")
	work := flag.Int("work", -1, "increments per job for tiny-tasks (default 1; ignored elsewhere)")
	mode := flag.String("mode", "", "tiny-tasks spawner: runtime (plain goroutine, the default) or thread (LockOSThread); worker-pool shape: PxC/cap=K (default 4x4/cap=1024)")
	warmup := flag.Int("warmup", -1, "size of the warm-up run (default min(n, 10000); 0 = none)")
	flag.Parse() // exits 2 on a malformed flag

	run, ok := experiments[*exp]
	switch {
	case flag.NArg() > 0:
		usageError("unexpected arguments: %v", flag.Args())
	case !ok:
		usageError("unknown experiment %q (known: %s)", *exp, strings.Join(experimentIDs(), ", "))
	case *n < 1:
		usageError("-n must be >= 1 (got %d)", *n)
	case *exp == "tiny-tasks" && *mode != "" && *mode != "runtime" && *mode != "thread":
		usageError("-mode must be runtime or thread for tiny-tasks (got %q)", *mode)
	case *warmup < -1:
		usageError("-warmup must be >= 0 (got %d)", *warmup)
	}

	cfg := config{n: *n, mode: *mode}
	switch *exp {
	case "tiny-tasks":
		cfg.work = 1
		if *work >= 0 {
			cfg.work = *work
		}
		if cfg.mode == "" {
			cfg.mode = "runtime"
		}
	case "echo":
		cfg.work = 100
		if *work > 0 {
			cfg.work = *work
		}
	case "worker-pool":
		if cfg.mode == "" {
			cfg.mode = "4x4/cap=1024"
		}
		if _, _, _, err := parsePoolMode(cfg.mode); err != nil {
			usageError("%v", err)
		}
	default:
		if *work > 0 {
			fmt.Fprintf(os.Stderr, "gobench: -work is ignored by %s\n", *exp)
		}
		if cfg.mode != "" {
			fmt.Fprintf(os.Stderr, "gobench: -mode is ignored by %s\n", *exp)
		}
		cfg.mode = ""
	}

	warm := *warmup
	if warm < 0 {
		warm = *n
		if warm > 10000 {
			warm = 10000
		}
	}
	if warm > 0 {
		wcfg := cfg
		wcfg.n = warm
		if got, want := run(wcfg); got != want {
			fmt.Fprintf(os.Stderr, "gobench: warm-up of %s (n=%d) computed %d, expected %d\n", *exp, warm, got, want)
			os.Exit(3)
		}
	}

	lateness = nil // only the measured run's samples are reported
	r := measure(func() (int64, int64) { return run(cfg) })
	r.Experiment, r.Variant, r.Mode, r.N, r.Work = *exp, "go", cfg.mode, cfg.n, cfg.work
	r.Metrics = latenessMetrics()
	if *exp == "echo" {
		r.Metrics = echoSwitches
	}
	if err := r.print(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gobench:", err)
		os.Exit(1)
	}
	if !r.ResultOK {
		fmt.Fprintf(os.Stderr, "gobench: %s computed %d, expected %d\n", *exp, r.Result, r.Expected)
		os.Exit(3)
	}
}

func experimentIDs() []string {
	ids := make([]string, 0, len(experiments))
	for id := range experiments {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
