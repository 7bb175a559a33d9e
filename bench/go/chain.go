package main

// E2: a million chained workers (experiments.md, "A million chained tasks vs Go goroutines").
// Creating the N goroutines is part of the measured time in both forms, as in the
// published benchmark and the .NET variants.

// chainTasks is E2's task form: worker i awaits worker i-1's result and returns it + 1.
// A task's result is modelled as a future: a chan int of capacity 1 that the worker
// completes exactly once, so completing never blocks (like setting a Task's result),
// and the next worker "awaits" it by receiving.
func chainTasks(cfg config) (result, expected int64) {
	first := make(chan int, 1)
	prev := first
	for i := 0; i < cfg.n; i++ {
		out := make(chan int, 1)
		go chainTask(prev, out)
		prev = out
	}
	first <- 0
	return int64(<-prev), int64(cfg.n)
}

func chainTask(prev <-chan int, out chan<- int) {
	v := <-prev // await the previous task
	out <- v + 1
}

// chainChannels is E2's channel form, the classic Go "daisy chain": N+1 unbuffered
// channels; worker i receives from ch[i], adds 1 and sends to ch[i+1] (a rendezvous,
// like .NET's Channel.CreateBounded<int>(0)).
func chainChannels(cfg config) (result, expected int64) {
	first := make(chan int)
	left := first
	for i := 0; i < cfg.n; i++ {
		right := make(chan int)
		go chainLink(left, right)
		left = right
	}
	first <- 0
	return int64(<-left), int64(cfg.n)
}

func chainLink(in <-chan int, out chan<- int) {
	out <- 1 + <-in
}
