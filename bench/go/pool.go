package main

import (
	"fmt"
	"sync"
)

// worker-pool: P producers and C consumers over one channel of capacity K
// (-mode PxC/cap=K; K = 0 is unbuffered). Producer p sends p, p+P, p+2P, ... below N;
// the channel is closed after a WaitGroup of the producers; consumers range over it
// and the result is the sum of their sums, 0 + 1 + ... + (N-1).

// parsePoolMode parses "PxC/cap=K".
func parsePoolMode(mode string) (producers, consumers, capacity int, err error) {
	if _, err = fmt.Sscanf(mode, "%dx%d/cap=%d", &producers, &consumers, &capacity); err != nil {
		return 0, 0, 0, fmt.Errorf("worker-pool -mode %q is not PxC/cap=K: %v", mode, err)
	}
	if producers < 1 || consumers < 1 || capacity < 0 {
		return 0, 0, 0, fmt.Errorf("worker-pool -mode %q: need P >= 1, C >= 1, K >= 0", mode)
	}
	return producers, consumers, capacity, nil
}

func workerPool(cfg config) (result, expected int64) {
	producers, consumers, capacity, err := parsePoolMode(cfg.mode)
	if err != nil {
		panic(err) // main validated the mode already
	}
	ch := make(chan int64, capacity)
	var senders sync.WaitGroup
	senders.Add(producers)
	for p := 0; p < producers; p++ {
		go produce(ch, int64(p), int64(producers), int64(cfg.n), &senders)
	}
	sums := make(chan int64, consumers)
	for k := 0; k < consumers; k++ {
		go consume(ch, sums)
	}
	senders.Wait()
	close(ch)
	var sum int64
	for k := 0; k < consumers; k++ {
		sum += <-sums
	}
	n := int64(cfg.n)
	return sum, n * (n - 1) / 2
}

func produce(ch chan<- int64, first, step, n int64, wg *sync.WaitGroup) {
	for i := first; i < n; i += step {
		ch <- i
	}
	wg.Done()
}

func consume(ch <-chan int64, sums chan<- int64) {
	var sum int64
	for v := range ch {
		sum += v
	}
	sums <- sum
}
