package main

import (
	"io"
	"net"
	"sync"
	"syscall"
)

// echo: an echo server and n clients on loopback in one process; each client makes
// cfg.work round trips of a 64-byte message (TCP_NODELAY, Go's default). The result is
// the number of round trips; the context switches of the run go to echoMetrics.
func echo(cfg config) (int64, int64) {
	before := contextSwitches()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	var servers sync.WaitGroup
	go func() {
		for i := 0; i < cfg.n; i++ {
			conn, err := ln.Accept()
			if err != nil {
				panic(err)
			}
			servers.Add(1)
			go func(c net.Conn) {
				defer servers.Done()
				defer c.Close()
				buf := make([]byte, 64)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}(conn)
		}
	}()

	var total int64
	var mu sync.Mutex
	var clients sync.WaitGroup
	addr := ln.Addr().String()
	for i := 0; i < cfg.n; i++ {
		clients.Add(1)
		go func() {
			defer clients.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				panic(err)
			}
			defer conn.Close()
			msg := make([]byte, 64)
			reply := make([]byte, 64)
			for r := 0; r < cfg.work; r++ {
				if _, err := conn.Write(msg); err != nil {
					panic(err)
				}
				if _, err := io.ReadFull(conn, reply); err != nil {
					panic(err)
				}
			}
			conn.(*net.TCPConn).CloseWrite()
			mu.Lock()
			total += int64(cfg.work)
			mu.Unlock()
		}()
	}
	clients.Wait()
	servers.Wait()
	after := contextSwitches()
	echoSwitches = map[string]float64{
		"ctx_voluntary": float64(after[0] - before[0]),
		"ctx_switches":  float64(after[0] - before[0] + after[1] - before[1]),
	}
	return total, int64(cfg.n) * int64(cfg.work)
}

// echoSwitches holds the last echo run's context switches, for the metrics.
var echoSwitches map[string]float64

// contextSwitches returns the process's voluntary and involuntary context switches so
// far, from getrusage(RUSAGE_SELF), which also counts threads that have exited.
func contextSwitches() [2]int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return [2]int64{}
	}
	return [2]int64{int64(ru.Nvcsw), int64(ru.Nivcsw)}
}
