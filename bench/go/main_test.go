package main

import "testing"

// TestExperiments runs every experiment at small sizes and checks its result.
func TestExperiments(t *testing.T) {
	for id, run := range experiments {
		for _, n := range []int{1, 999, 1000, 1001, 5000} {
			for _, cfg := range []config{{n: n, mode: "runtime"}, {n: n, work: 3, mode: "runtime"}, {n: n, work: 2, mode: "thread"}} {
				if got, want := run(cfg); got != want {
					t.Errorf("%s %+v: got %d, want %d", id, cfg, got, want)
				}
			}
		}
	}
}
