package jssys

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// startServer runs nats-server with JetStream on a file store in the test's
// temporary folder, on a free port; the test skips when nats-server is not
// installed.
func startServer(t *testing.T) (url, store string, kill func()) {
	t.Helper()
	bin := kittest.Binary(t, "Debian package nats-server", "nats-server")
	store = t.TempDir()
	srv := kittest.StartServer(t, bin, func(port int) []string {
		return []string{"-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", store}
	})
	return "nats://" + srv.Addr, store, srv.Stop
}

// Every variant delivers every message of every source to every receiver,
// whole and in order, nothing dropped; the stream is gone afterwards.
func TestDeliversEverythingInOrder(t *testing.T) {
	url, _, _ := startServer(t)
	variants := []pubsub.Options{{}, {"sync_publish": true}, {"push": true}}
	for _, opts := range variants {
		for _, batching := range []int{0, 8192} {
			p := pubsub.Params{PayloadBytes: 200, Sources: 2, Receivers: 2, BatchingBytes: batching}
			perSource := 2000
			if opts["sync_publish"] == true {
				perSource = 300 // a round trip each
			}
			kittest.RoundTrip{System: System{}, Env: pubsub.Env{ServiceURL: url}, Options: opts, Params: p,
				PerSource: perSource, Wait: 20 * time.Second}.Run(t)
		}
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := nc.JetStream()
	if _, err := js.StreamInfo(streamName); err == nil {
		t.Fatalf("stream %s still exists after the last receiver closed", streamName)
	}
}

// Messages are stored: a receiver that subscribed, then is slow, still gets
// everything (the stream holds what it has not read yet).
func TestSlowReceiverLosesNothing(t *testing.T) {
	url, _, _ := startServer(t)
	p := pubsub.Params{PayloadBytes: 1024, Sources: 1, Receivers: 1}
	kittest.RoundTrip{System: System{}, Env: pubsub.Env{ServiceURL: url}, Params: p, PerSource: 3000,
		Stall: 500 * time.Millisecond, Wait: 20 * time.Second}.Run(t)
}

func TestOptions(t *testing.T) {
	p := pubsub.Params{PayloadBytes: 16, Sources: 1, Receivers: 1}
	if err := (System{}).Check(pubsub.Options{"sync_publish": "yes"}, p); err == nil || !strings.Contains(err.Error(), "sync_publish") {
		t.Fatalf("sync_publish = \"yes\": %v", err)
	}
	if err := (System{}).Check(pubsub.Options{"pull": true}, p); err == nil || !strings.Contains(err.Error(), "pull") {
		t.Fatalf("unknown option: %v", err)
	}
}

// A broker that dies mid-run fails the next publish, sync or async (then at
// its Flush), with an error naming it.
func TestBrokerGone(t *testing.T) {
	url, _, kill := startServer(t)
	p := pubsub.Params{PayloadBytes: 64, Sources: 2, Receivers: 1}
	ctx := context.Background()
	env := pubsub.Env{ServiceURL: url}
	rc, err := System{}.Subscribe(ctx, env, pubsub.Options{}, p, 0, func([]byte) {})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var sources []pubsub.Source
	for i, opts := range []pubsub.Options{{"sync_publish": true}, {}} {
		src, err := System{}.Connect(ctx, env, opts, p, i)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		if err := src.Publish(pubsub.EncodeMessage(64, uint32(i), 1, 0)); err != nil {
			t.Fatal(err)
		}
		sources = append(sources, src)
	}
	kill()
	for i, src := range sources {
		var perr error
		for seq := 2; seq < 100 && perr == nil; seq++ {
			if perr = src.Publish(pubsub.EncodeMessage(64, uint32(i), uint32(seq), 0)); perr == nil {
				perr = src.Flush()
			}
		}
		if perr == nil || !strings.Contains(perr.Error(), url) {
			t.Fatalf("source %d publishing to a dead server: %v", i, perr)
		}
	}
}

func TestUnreachable(t *testing.T) {
	_, err := System{}.Connect(context.Background(), pubsub.Env{ServiceURL: "nats://127.0.0.1:1"}, pubsub.Options{},
		pubsub.Params{PayloadBytes: 16}, 0)
	if err == nil || !strings.Contains(err.Error(), "nats://127.0.0.1:1") {
		t.Fatalf("got %v", err)
	}
}
