package jssys

import (
	"testing"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// backlogCounted: a receiver that stops taking messages leaves them in the
// stream, and Backlog says how many, those nats.go already holds for it
// included; after Halt every message is either received or still held, none
// in between, and what is published after it is held.
func backlogCounted(t *testing.T, env pubsub.Env, opts pubsub.Options) {
	t.Helper()
	const perSource = 3000
	p := pubsub.Params{PayloadBytes: 64, Sources: 2, SourceThreads: 2, Receivers: 1}
	b := kittest.SubscribeStalled(t, System{}, env, opts, p)
	defer b.Close()
	if held, err := b.Backlog(); err != nil || held != 0 {
		t.Fatalf("before anything was published the broker holds %d (%v), want 0", held, err)
	}
	for s := 0; s < p.Sources; s++ {
		kittest.Publish(t, System{}, env, opts, p, s, 1, perSource) // every message acked: in the stream
	}
	// The stalled receiver has delivered nothing yet (its first message is
	// still in deliver), though the server has sent it some (nats.go's
	// buffer): the stream holds every message for it.
	const total = 2 * perSource
	held, err := b.Backlog()
	if err != nil {
		t.Fatal(err)
	}
	if held != total {
		t.Fatalf("the broker holds %d of %d for a stalled receiver, want all", held, total)
	}
	// Let it take some, then stop it part-way.
	b.HaltAfter(t, 100)
	received := b.Received()
	left, err := b.Backlog()
	if err != nil {
		t.Fatal(err)
	}
	if received+left != total || received >= total {
		t.Errorf("after Halt, received %d + still held %d != published %d (or it got everything)",
			received, left, total)
	}
	// What is published after Halt is held for the halted receiver, none of it delivered.
	const more = 500
	kittest.Publish(t, System{}, env, opts, p, 0, perSource+1, perSource+more)
	after, err := b.Backlog()
	if err != nil {
		t.Fatal(err)
	}
	if b.Received() != received || received+after != total+more {
		t.Errorf("after Halt and %d more: received %d (was %d) + still held %d != published %d", more,
			b.Received(), received, after, total+more)
	}
}

func TestBacklogCounted(t *testing.T) {
	url, _, _ := startServer(t)
	for name, opts := range map[string]pubsub.Options{"pull": {}, "push": {"push": true}} {
		t.Run(name, func(t *testing.T) { backlogCounted(t, pubsub.Env{ServiceURL: url}, opts) })
	}
}
