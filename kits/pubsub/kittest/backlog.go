package kittest

import (
	"testing"

	"msgbench/kits/pubsub"
)

// BacklogAcrossHalt checks a persistent system's Backlogger around a halt: with
// receiver 0 stalled on its first message, perSource messages from each of
// p.Sources sources (every one the broker's once Publish's flush returns) are
// all held for it; once it has taken at least 100 and halted, every message is
// either received or still held, none in between, whatever its client had
// fetched and buffered; and 500 more published after the halt are held, none
// delivered. It returns what the receiver took before the halt.
func BacklogAcrossHalt(t *testing.T, sys pubsub.System, env pubsub.Env, opts pubsub.Options,
	p pubsub.Params, perSource uint32) (received int64) {
	t.Helper()
	b := SubscribeStalled(t, sys, env, opts, p)
	defer b.Close()
	if held, err := b.Backlog(); err != nil || held != 0 {
		t.Fatalf("before anything was published the broker holds %d (%v), want 0", held, err)
	}
	for s := 0; s < p.Sources; s++ {
		Publish(t, sys, env, opts, p, s, 1, perSource)
	}
	// Nothing delivered yet (the first message is still in deliver), though the
	// broker may have sent some to the client: it holds every one for the receiver.
	total := int64(p.Sources) * int64(perSource)
	if held := backlog(t, b); held != total {
		t.Fatalf("the broker holds %d of %d for a stalled receiver, want all", held, total)
	}
	b.HaltAfter(t, 100)
	received = b.Received()
	if left := backlog(t, b); received+left != total {
		t.Errorf("after Halt, received %d + still held %d != published %d", received, left, total)
	}
	const more = 500
	Publish(t, sys, env, opts, p, 0, perSource+1, perSource+more)
	if after := backlog(t, b); b.Received() != received || received+after != total+more {
		t.Errorf("after Halt and %d more: received %d (was %d) + still held %d != published %d", more,
			b.Received(), received, after, total+more)
	}
	return received
}

func backlog(t *testing.T, b *Stalled) int64 {
	t.Helper()
	held, err := b.Backlog()
	if err != nil {
		t.Fatal(err)
	}
	return held
}
