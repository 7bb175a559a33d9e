package main

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// report is the one JSON line printed on stdout. Field order is the protocol's.
type report struct {
	Experiment     string  `json:"experiment"`
	Variant        string  `json:"variant"`
	Mode           string  `json:"mode"`
	N              int     `json:"n"`
	Work           int     `json:"work"`
	WallMs         float64 `json:"wall_ms"`
	CPUMs          float64 `json:"cpu_ms"`
	PeakWSBytes    int64   `json:"peak_ws_bytes"`
	AllocatedBytes uint64  `json:"allocated_bytes"`
	Result         int64   `json:"result"`
	Expected       int64   `json:"expected"`
	ResultOK       bool    `json:"result_ok"`
	// Metrics are experiment-specific values (the sleepers' late_p50_ms, late_p99_ms, ...).
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

func (r *report) print(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// measure runs f once and records wall time, process CPU time (user+sys),
// bytes allocated on the Go heap, and the process's peak resident set (VmHWM).
// A GC beforehand keeps the warm-up's garbage out of the measured run.
func measure(f func() (result, expected int64)) report {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	t0 := time.Now() // carries a monotonic clock reading

	result, expected := f()

	wall := time.Since(t0)
	cpu1 := cpuTime()
	runtime.ReadMemStats(&m1)

	return report{
		WallMs:         ms(wall),
		CPUMs:          ms(cpu1 - cpu0),
		PeakWSBytes:    peakRSS(),
		AllocatedBytes: m1.TotalAlloc - m0.TotalAlloc,
		Result:         result,
		Expected:       expected,
		ResultOK:       result == expected,
	}
}

// ms converts to milliseconds rounded to a microsecond.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/1e3) / 1e3
}

// cpuTime is the user+sys CPU time of the whole process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS reads VmHWM (peak resident set, "kB") from /proc/self/status, in bytes; -1 if unavailable.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := s.Text(); strings.HasPrefix(line, "VmHWM:") {
			rest := strings.TrimPrefix(line, "VmHWM:")
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb * 1024
		}
	}
	return -1
}
