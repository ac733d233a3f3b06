package kafkasys

import (
	"testing"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// backlogCounted: a receiver that stops taking records leaves them in the
// broker's log, and Backlog says how many (its lag over every partition);
// after Halt every message is either received or still held, none in
// between, whatever the client had fetched and buffered, and what is
// published after it is held.
func backlogCounted(t *testing.T, env pubsub.Env) {
	t.Helper()
	const perSource = 3000
	p := pubsub.Params{PayloadBytes: 64, Sources: 2, SourceThreads: 2, Receivers: 1}
	b := kittest.SubscribeStalled(t, System{}, env, pubsub.Options{}, p)
	defer b.Close()
	if held, err := b.Backlog(); err != nil || held != 0 {
		t.Fatalf("before anything was published the broker holds %d (%v), want 0", held, err)
	}
	for s := 0; s < p.Sources; s++ {
		kittest.Publish(t, System{}, env, pubsub.Options{}, p, s, 1, perSource) // every record acked: in the log
	}
	// The stalled receiver has delivered nothing yet (its first record is
	// still in deliver): the broker holds every record for it.
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
	left, err := b.Backlog()
	if err != nil {
		t.Fatal(err)
	}
	if b.Received()+left != total {
		t.Errorf("after Halt, received %d + still held %d != published %d", b.Received(), left, total)
	}
	// What is published after Halt is held for the halted receiver, none of it delivered.
	const more = 500
	kittest.Publish(t, System{}, env, pubsub.Options{}, p, 0, perSource+1, perSource+more)
	after, err := b.Backlog()
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Received() + after; got != total+more || after < more {
		t.Errorf("after Halt and %d more: received %d + still held %d != published %d", more, b.Received(),
			after, total+more)
	}
}
