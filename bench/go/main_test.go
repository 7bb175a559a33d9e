package main

import "testing"

// TestExperiments runs every experiment at small sizes and checks its result.
func TestExperiments(t *testing.T) {
	for id, run := range experiments {
		switch id {
		case "sleepers": // one second per run: once, small
			if got, want := run(config{n: 1000}); got != want {
				t.Errorf("%s: got %d, want %d", id, got, want)
			}
			if m := latenessMetrics(); m == nil || m["late_min_ms"] < -1 || m["late_max_ms"] < m["late_p50_ms"] {
				t.Errorf("%s: implausible lateness metrics %v", id, m)
			}
			continue
		case "worker-pool":
			for _, n := range []int{1, 999, 5000} {
				for _, mode := range []string{"4x4/cap=1024", "1x8/cap=1024", "4x4/cap=0", "1x8/cap=0", "3x2/cap=1"} {
					if got, want := run(config{n: n, mode: mode}); got != want {
						t.Errorf("%s n=%d %s: got %d, want %d", id, n, mode, got, want)
					}
				}
			}
			continue
		}
		for _, n := range []int{1, 999, 1000, 1001, 5000} {
			for _, cfg := range []config{{n: n, mode: "runtime"}, {n: n, work: 3, mode: "runtime"}, {n: n, work: 2, mode: "thread"}} {
				if got, want := run(cfg); got != want {
					t.Errorf("%s %+v: got %d, want %d", id, cfg, got, want)
				}
			}
		}
	}
}

// TestParsePoolMode checks the worker-pool shape syntax.
func TestParsePoolMode(t *testing.T) {
	if p, c, k, err := parsePoolMode("4x8/cap=0"); err != nil || p != 4 || c != 8 || k != 0 {
		t.Errorf("4x8/cap=0: got %d %d %d %v", p, c, k, err)
	}
	for _, bad := range []string{"", "4x4", "0x4/cap=1", "4x4/cap=-1", "runtime"} {
		if _, _, _, err := parsePoolMode(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
