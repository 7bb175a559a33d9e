package main

import (
	"sort"
	"sync"
	"time"
)

// sleepers: N goroutines, started one after the other; each sleeps one second, notes
// its lateness (wake time - its own due time, monotonic clock) in a preallocated
// slice, and calls wg.Done(); the caller waits with wg.Wait(). The result is the
// number of sleepers that woke. The lateness samples go to measure's metrics.

const sleepFor = time.Second

// notWoken marks a slot no sleeper has written yet.
const notWoken = int64(-1 << 63)

// lateness holds the last run's per-sleeper lateness in nanoseconds.
var lateness []int64

func sleepers(cfg config) (result, expected int64) {
	late := make([]int64, cfg.n)
	for i := range late {
		late[i] = notWoken
	}
	lateness = late
	var wg sync.WaitGroup
	wg.Add(cfg.n)
	for i := 0; i < cfg.n; i++ {
		go sleeper(late, i, &wg)
	}
	wg.Wait()
	var woken int64
	for _, l := range late {
		if l != notWoken {
			woken++
		}
	}
	return woken, int64(cfg.n)
}

func sleeper(late []int64, i int, wg *sync.WaitGroup) {
	due := time.Now().Add(sleepFor)
	time.Sleep(sleepFor)
	late[i] = int64(time.Since(due))
	wg.Done()
}

// latenessMetrics turns the last run's samples into the metrics the compare tool reads
// (milliseconds): median, p99, maximum and minimum. Nil if no run recorded any.
func latenessMetrics() map[string]float64 {
	if len(lateness) == 0 {
		return nil
	}
	sorted := append([]int64(nil), lateness...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	p99 := (len(sorted)*99+99)/100 - 1
	if p99 >= len(sorted) {
		p99 = len(sorted) - 1
	}
	return map[string]float64{
		"late_p50_ms": ms(sorted[(len(sorted)-1)/2]),
		"late_p99_ms": ms(sorted[p99]),
		"late_max_ms": ms(sorted[len(sorted)-1]),
		"late_min_ms": ms(sorted[0]),
	}
}
