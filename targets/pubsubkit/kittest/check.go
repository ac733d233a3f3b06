package kittest

import (
	"testing"

	"msgbench/pubsubkit"
)

// NoBatching checks a System that has no batching to turn on: in each
// variant, Check answers batching_bytes > 0 with an *Unsupported and accepts
// the same parameters with batching_bytes = 0.
func NoBatching(t testing.TB, sys pubsubkit.System, variants ...string) {
	t.Helper()
	p := pubsubkit.Params{PayloadBytes: 1024, Sources: 1, SourceThreads: 1, Receivers: 1, BatchingBytes: 8192}
	for _, variant := range variants {
		p.BatchingBytes = 8192
		if err := sys.Check(variant, p); err == nil {
			t.Errorf("%s: batching_bytes > 0 accepted", variant)
		} else if _, ok := err.(*pubsubkit.Unsupported); !ok {
			t.Errorf("%s: batching_bytes > 0: %T %v, want an *Unsupported", variant, err, err)
		}
		p.BatchingBytes = 0
		if err := sys.Check(variant, p); err != nil {
			t.Errorf("%s: %v", variant, err)
		}
	}
}
