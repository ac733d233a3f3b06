package tcpsys

import (
	"context"
	"testing"
	"time"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// Every message of every source reaches every receiver, whole and in order,
// batched or not, including a partial last batch pushed out by Flush.
func TestDeliversEverythingInOrder(t *testing.T) {
	for _, c := range []struct{ payload, batching int }{{16, 0}, {16, 8192}, {1000, 4096}, {70000, 8192}} {
		p := pubsub.Params{PayloadBytes: c.payload, Sources: 2, SourceThreads: 1, Receivers: 2, BatchingBytes: c.batching}
		const n = 3001 // not a whole number of batches
		kittest.RoundTrip{System: System{}, Params: p, PerSource: n, Wait: 10 * time.Second}.Run(t)
	}
}

func TestCheck(t *testing.T) {
	if err := (System{}).Check(pubsub.Options{}, pubsub.Params{}); err != nil {
		t.Error(err)
	}
	kittest.RefusesUnknownOptions(t, System{})
}

func TestConnectRefused(t *testing.T) {
	_, err := System{}.Connect(context.Background(), pubsub.Env{Endpoints: []string{"127.0.0.1:1"}}, pubsub.Options{},
		pubsub.Params{PayloadBytes: 16}, 0)
	if err == nil {
		t.Fatal("connected to port 1")
	}
}
