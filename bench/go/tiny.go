package main

import "runtime"

// E5: tiny tasks. `while (...) Task.Run(() => X += 1).GetAwaiter().GetResult();`:
// N sequential spawn-and-wait operations, each job doing W increments of a shared
// counter. Only one job runs at a time and the spawner waits for it, so the counter
// needs no synchronization (the channel hand-off orders the accesses).
//
// -mode runtime: the spawner is a plain goroutine, so waiting parks it inside the
// scheduler (like awaiting inside the runtime).
// -mode thread: the spawner first locks itself to its OS thread, so each wait blocks
// a real OS thread and the job must be woken/run on another (like GetResult() on a
// blocking thread; the anchors' "waiting on a blocking OS thread" row).

func tinyTasks(cfg config) (result, expected int64) {
	if cfg.mode == "thread" {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	var counter int64
	done := make(chan struct{})
	for i := 0; i < cfg.n; i++ {
		go tinyJob(&counter, cfg.work, done)
		<-done
	}
	return counter, int64(cfg.n) * int64(cfg.work)
}

func tinyJob(counter *int64, work int, done chan<- struct{}) {
	for j := 0; j < work; j++ {
		*counter++
	}
	done <- struct{}{}
}
