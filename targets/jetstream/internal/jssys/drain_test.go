package jssys

import (
	"testing"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// backlogCounted: a receiver that stops taking messages leaves them in the
// stream, and Backlog says how many, those nats.go already holds for it
// included, across a halt (kittest.BacklogAcrossHalt); halted part-way, it has
// not taken everything.
func backlogCounted(t *testing.T, env pubsub.Env, opts pubsub.Options) {
	const perSource = 3000
	p := pubsub.Params{PayloadBytes: 64, Sources: 2, SourceThreads: 2, Receivers: 1}
	if received := kittest.BacklogAcrossHalt(t, System{}, env, opts, p, perSource); received >= 2*perSource {
		t.Errorf("halted after 100, the receiver still took all %d", received)
	}
}

func TestBacklogCounted(t *testing.T) {
	url, _, _ := startServer(t)
	for name, opts := range map[string]pubsub.Options{"pull": {}, "push": {"push": true}} {
		t.Run(name, func(t *testing.T) { backlogCounted(t, pubsub.Env{ServiceURL: url}, opts) })
	}
}
