package zmqsys

import (
	"context"
	"testing"
	"time"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// No server to start: ZeroMQ is brokerless, libzmq is linked in.

// TestDefault: receivers that keep up get everything; the subscription
// handshake means even the first message is not lost to a slow joiner.
func TestDefault(t *testing.T) {
	p := pubsub.Params{PayloadBytes: 100, Sources: 2, SourceThreads: 1, Receivers: 2}
	kittest.RoundTrip{System: System{}, Params: p, PerSource: 500}.Run(t)
}

// TestDefaultDrops: the same stall with the default HWM loses messages
// (the reason "default" is not lossless) rather than blocking; what does
// arrive is whole and in order.
func TestDefaultDrops(t *testing.T) {
	p := pubsub.Params{PayloadBytes: 64 << 10, Sources: 2, SourceThreads: 1, Receivers: 1}
	rt := kittest.RoundTrip{System: System{}, Params: p, PerSource: 3000, Lossy: true, Stall: time.Second}
	if n := rt.Run(t)[0]; n >= 6000 {
		t.Errorf("got all %d messages despite the stall: no drop at the HWM?", n)
	}
}

// TestNoDrop: receivers that stall while the sources publish far more than
// the HWMs hold still get every message; the sources block instead.
func TestNoDrop(t *testing.T) {
	p := pubsub.Params{PayloadBytes: 64 << 10, Sources: 2, SourceThreads: 1, Receivers: 2}
	kittest.RoundTrip{System: System{}, Options: pubsub.Options{"no_drop": true}, Params: p, PerSource: 3000, Stall: time.Second}.Run(t)
}

func TestCheck(t *testing.T) {
	kittest.NoBatching(t, System{}, pubsub.Options{}, pubsub.Options{"no_drop": true})
	kittest.RefusesUnknownOptions(t, System{})
}

func TestNoReceiverAnswers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	env := pubsub.Env{Endpoints: []string{"tcp://127.0.0.1:1"}}
	p := pubsub.Params{PayloadBytes: 16, Sources: 1, Receivers: 1}
	if _, err := (System{}).Connect(ctx, env, pubsub.Options{}, p, 0); err == nil {
		t.Fatal("Connect without a live receiver succeeded")
	}
}
