package kittest

import (
	"context"
	"testing"

	"msgbench/kits/pubsub"
)

// Publish connects source to sys, publishes its messages with sequence numbers
// from..to (inclusive), flushes (every message the broker's, as Flush promises)
// and closes the source.
func Publish(t testing.TB, sys pubsub.System, env pubsub.Env, opts pubsub.Options, p pubsub.Params,
	source int, from, to uint32) {
	t.Helper()
	src, err := sys.Connect(context.Background(), env, opts, p, source)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for seq := from; seq <= to; seq++ {
		if err := src.Publish(pubsub.EncodeMessage(p.PayloadBytes, uint32(source), seq, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.Flush(); err != nil {
		t.Fatal(err)
	}
}
