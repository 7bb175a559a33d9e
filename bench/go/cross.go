package main

import "runtime"

// cross-ping-pong: the Go shape of a ping-pong between a single-threaded runtime and
// the multi-thread one. The pinger is locked to its OS thread (runtime.LockOSThread,
// as a thread-bound driver), the ponger is a plain goroutine; two unbuffered channels,
// N round trips, the pinger sums the replies i+1.
func crossPingPong(cfg config) (result, expected int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return pingPong(cfg)
}

// task-awaits-jobs: plain code awaiting N jobs one after the other. Each job is a
// goroutine that yields once (runtime.Gosched) and sends its number on a channel the
// caller receives from; the result is 0 + 1 + ... + (N-1).
func awaitJobs(cfg config) (result, expected int64) {
	done := make(chan int64)
	var sum int64
	for i := 0; i < cfg.n; i++ {
		go yieldingJob(int64(i), done)
		sum += <-done
	}
	n := int64(cfg.n)
	return sum, n * (n - 1) / 2
}

func yieldingJob(x int64, done chan<- int64) {
	runtime.Gosched()
	done <- x
}
