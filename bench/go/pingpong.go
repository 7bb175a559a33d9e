package main

// ping-pong: the cost of one hop between two goroutines. The pinger (the calling
// goroutine) sends i over an unbuffered channel, the ponger replies i+1 over another,
// N round trips; the pinger sums the replies. Each round trip is two rendezvous
// hand-offs, the Go counterpart of two jobs awaiting each other in turn.

func pingPong(cfg config) (result, expected int64) {
	ping, pong := make(chan int), make(chan int)
	go ponger(ping, pong)
	var sum int64
	for i := 0; i < cfg.n; i++ {
		ping <- i
		sum += int64(<-pong)
	}
	close(ping)
	n := int64(cfg.n)
	return sum, n * (n + 1) / 2 // sum over i < n of (i + 1)
}

func ponger(ping <-chan int, pong chan<- int) {
	for v := range ping {
		pong <- v + 1
	}
}
