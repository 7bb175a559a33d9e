package main

import "sync"

// E3: spawning without closures. The .NET variants spawn with a typed state argument
// instead of a capturing lambda; the Go equivalent is `go f(state, ...)` with a named
// top-level function and the state passed by value, capturing no locals. Note that since
// Go 1.17 the compiler wraps `go f(args)` in a small closure that holds the copied
// arguments, so each spawn still allocates a few tens of bytes on the heap (reported in
// allocated_bytes; goroutine descriptors and stacks are reused and not counted there).
// N jobs run in batches of spawnBatch: spawn the batch, wait for all of it, then the
// spawner sums the batch's slots. Job k has state {a: k, b: 1} and produces a+b.

const spawnBatch = 1000

type spawnState struct{ a, b int64 }

func spawn(cfg config) (result, expected int64) {
	slots := make([]int64, spawnBatch)
	var wg sync.WaitGroup
	var sum int64
	for base := 0; base < cfg.n; base += spawnBatch {
		size := cfg.n - base
		if size > spawnBatch {
			size = spawnBatch
		}
		wg.Add(size)
		for i := 0; i < size; i++ {
			go spawnJob(spawnState{a: int64(base + i), b: 1}, &slots[i], &wg)
		}
		wg.Wait()
		for _, v := range slots[:size] {
			sum += v
		}
	}
	n := int64(cfg.n)
	return sum, n * (n + 1) / 2 // sum over k < n of (k + 1)
}

func spawnJob(s spawnState, slot *int64, wg *sync.WaitGroup) {
	*slot = s.a + s.b
	wg.Done()
}
