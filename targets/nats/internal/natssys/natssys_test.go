package natssys

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// startServer runs nats-server on a free port for one test; the test skips
// when nats-server is not installed.
func startServer(t *testing.T) (url string, kill func()) {
	t.Helper()
	bin := kittest.Binary(t, "Debian package nats-server", "nats-server")
	srv := kittest.StartServer(t, bin, func(port int) []string { return []string{"-a", "127.0.0.1", "-p", fmt.Sprint(port)} })
	return "nats://" + srv.Addr, srv.Stop
}

// Every message of every source reaches every receiver, whole and in order,
// with nothing dropped, batched or not.
func TestDeliversEverythingInOrder(t *testing.T) {
	url, _ := startServer(t)
	for _, batching := range []int{0, 8192} {
		p := pubsub.Params{PayloadBytes: 200, Sources: 2, Receivers: 2, BatchingBytes: batching}
		kittest.RoundTrip{System: System{}, Env: pubsub.Env{ServiceURL: url}, Params: p,
			PerSource: 2000, Wait: 10 * time.Second}.Run(t)
	}
}

// The strict variant (a Flush after every Publish) delivers the same, and an
// option of the wrong type is refused naming it.
func TestFlushEach(t *testing.T) {
	url, _ := startServer(t)
	opts := pubsub.Options{"flush_each": true}
	p := pubsub.Params{PayloadBytes: 200, Sources: 2, Receivers: 1}
	if err := (System{}).Check(opts, p); err != nil {
		t.Fatal(err)
	}
	kittest.RoundTrip{System: System{}, Env: pubsub.Env{ServiceURL: url}, Options: opts, Params: p,
		PerSource: 300, Wait: 10 * time.Second}.Run(t)
	if err := (System{}).Check(pubsub.Options{"flush_each": "yes"}, p); err == nil || !strings.Contains(err.Error(), "flush_each") {
		t.Fatalf("flush_each = \"yes\": %v", err)
	}
	if err := (System{}).Check(pubsub.Options{"flush": true}, p); err == nil || !strings.Contains(err.Error(), "flush") {
		t.Fatalf("unknown option: %v", err)
	}
}

// A broker that dies mid-run fails the next publish with an error naming it.
func TestBrokerGone(t *testing.T) {
	url, kill := startServer(t)
	p := pubsub.Params{PayloadBytes: 64, Sources: 1, Receivers: 1, BatchingBytes: 0}
	src, err := System{}.Connect(context.Background(), pubsub.Env{ServiceURL: url}, pubsub.Options{}, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	kill()
	var perr error
	for i := 0; i < 100 && perr == nil; i++ {
		perr = src.Publish(pubsub.EncodeMessage(64, 0, uint32(i+1), 0))
		time.Sleep(10 * time.Millisecond)
	}
	if perr == nil || !strings.Contains(perr.Error(), url) {
		t.Fatalf("publishing to a dead server: %v", perr)
	}
}

func TestUnreachable(t *testing.T) {
	_, err := System{}.Connect(context.Background(), pubsub.Env{ServiceURL: "nats://127.0.0.1:1"}, pubsub.Options{},
		pubsub.Params{PayloadBytes: 16}, 0)
	if err == nil || !strings.Contains(err.Error(), "nats://127.0.0.1:1") {
		t.Fatalf("got %v", err)
	}
	_, err = System{}.Connect(context.Background(), pubsub.Env{}, pubsub.Options{}, pubsub.Params{PayloadBytes: 16}, 0)
	if err == nil || !strings.Contains(err.Error(), "MSGBENCH_SERVICE_URL") {
		t.Fatalf("got %v", err)
	}
}
