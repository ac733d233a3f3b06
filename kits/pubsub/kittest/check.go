package kittest

import (
	"strings"
	"testing"

	"msgbench/kits/pubsub"
)

// NoBatching checks a System that has no batching to turn on: with each
// variant's options, Check answers batching_bytes > 0 with an *Unsupported
// and accepts the same parameters with batching_bytes = 0.
func NoBatching(t testing.TB, sys pubsub.System, variants ...pubsub.Options) {
	t.Helper()
	p := pubsub.Params{PayloadBytes: 1024, Sources: 1, SourceThreads: 1, Receivers: 1, BatchingBytes: 8192}
	for _, opts := range variants {
		p.BatchingBytes = 8192
		if err := sys.Check(opts, p); err == nil {
			t.Errorf("%v: batching_bytes > 0 accepted", opts)
		} else if _, ok := err.(*pubsub.Unsupported); !ok {
			t.Errorf("%v: batching_bytes > 0: %T %v, want an *Unsupported", opts, err, err)
		}
		p.BatchingBytes = 0
		if err := sys.Check(opts, p); err != nil {
			t.Errorf("%v: %v", opts, err)
		}
	}
}

// RefusesUnknownOptions checks that Check names an option the system does not know.
func RefusesUnknownOptions(t testing.TB, sys pubsub.System) {
	t.Helper()
	p := pubsub.Params{PayloadBytes: 1024, Sources: 1, SourceThreads: 1, Receivers: 1}
	if err := sys.Check(pubsub.Options{"no_such_option": true}, p); err == nil ||
		!strings.Contains(err.Error(), "no_such_option") {
		t.Errorf("an unknown option: %v, want an error naming it", err)
	}
}
