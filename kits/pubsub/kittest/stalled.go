package kittest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"msgbench/kits/pubsub"
)

// Stalled is receiver 0 of a system that takes its first message and then waits
// in deliver until Release: a receiver that a drain finds behind while the broker
// still holds messages for it, which its pubsub.Backlogger must count.
type Stalled struct {
	pubsub.Backlogger
	receiver pubsub.Receiver
	received atomic.Int64
	release  func()
}

// SubscribeStalled subscribes receiver 0 and stalls it on its first message; the
// test fails unless the receiver is a pubsub.Backlogger. Close it when done.
func SubscribeStalled(t testing.TB, sys pubsub.System, env pubsub.Env, opts pubsub.Options,
	p pubsub.Params) *Stalled {
	t.Helper()
	s := &Stalled{}
	gate := make(chan struct{})
	s.release = sync.OnceFunc(func() { close(gate) })
	deliver := func([]byte) {
		if s.received.Add(1) == 1 {
			<-gate
		}
	}
	rc, err := sys.Subscribe(context.Background(), env, opts, p, 0, deliver)
	if err != nil {
		t.Fatal(err)
	}
	s.receiver = rc
	b, ok := rc.(pubsub.Backlogger)
	if !ok {
		s.Close()
		t.Fatal("the receiver does not say what the broker holds (pubsub.Backlogger)")
	}
	s.Backlogger = b
	return s
}

// Received is how many messages deliver has been called with.
func (s *Stalled) Received() int64 { return s.received.Load() }

// Release lets the receiver take the rest.
func (s *Stalled) Release() { s.release() }

// HaltAfter releases the receiver, waits until it has received at least n
// messages (30 s at most) and halts it part-way.
func (s *Stalled) HaltAfter(t testing.TB, n int64) {
	t.Helper()
	s.Release()
	for deadline := time.Now().Add(30 * time.Second); s.Received() < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
}

// Close releases the receiver first, on every path: a receiver's Close waits for
// deliver, which a failure before the release would leave blocked (and the broker's
// client running past the test).
func (s *Stalled) Close() {
	s.release()
	_ = s.receiver.Close()
}
