package rabbitsys

import (
	"context"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// backlogCounted: a receiver that stops taking deliveries leaves what the
// broker has not sent in its queue, and Backlog says how much; after Halt
// every message is either received or still in the queue, none in between
// (with auto-ack once the broker has sent everything: see Halt).
func backlogCounted(t *testing.T, env pubsub.Env, opts pubsub.Options) {
	t.Helper()
	const total = 5000
	p := pubsub.Params{PayloadBytes: 64, Sources: 1, SourceThreads: 1, Receivers: 1}
	b := kittest.SubscribeStalled(t, System{}, env, opts, p)
	defer b.Close()
	// The source confirms whatever the receiver's variant: once Flush
	// returns, every message is in the queue, and the counts below settle.
	kittest.Publish(t, System{}, env, confirms, p, 0, 1, total)
	// With consumer acks the broker sends at most prefetch unacknowledged
	// messages and keeps the rest; with auto-ack it sends everything, and
	// the client library buffers what the stalled receiver has not taken.
	want := int64(total - prefetch)
	if _, acks := opts["confirms"]; !acks {
		want = 0
	}
	var (
		held int64
		err  error
	)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if held, err = b.Backlog(); err != nil {
			t.Fatalf("%v: after %d received: %v", opts, b.Received(), err)
		}
		if held == want {
			break
		}
	}
	if held != want {
		t.Fatalf("%v: the broker holds %d of %d for a stalled receiver, want %d", opts, held, total, want)
	}
	b.HaltAfter(t, 0)
	left, err := b.Backlog()
	if err != nil {
		t.Fatal(err)
	}
	if b.Received()+left != total {
		t.Errorf("%v: after Halt, received %d + still queued %d != published %d", opts, b.Received(), left, total)
	}
}

// flushWaitsForAStoppedBroker: a plain source's Flush (no confirms) returns
// only once the broker has routed every message published before it, even
// when the broker read none of them yet (stopped by SIGSTOP, as a CPU-starved
// broker is): right after Flush every message is received or still queued,
// none still in the socket, so the receivers' drain, which starts after the
// sources' Flush, counts none of them as lost.
func flushWaitsForAStoppedBroker(t *testing.T, env pubsub.Env, node int) {
	const total = 500
	p := pubsub.Params{PayloadBytes: 64, Sources: 1, SourceThreads: 1, Receivers: 1}
	b := kittest.SubscribeStalled(t, System{}, env, plain, p)
	defer b.Close()
	src, err := System{}.Connect(context.Background(), env, plain, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := syscall.Kill(-node, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(-node, syscall.SIGCONT)
		}
	}
	defer resume() // never leave the node stopped for the tests after
	// 40 KB: within the socket's buffers, so Publish does not wait for the broker.
	for seq := uint32(1); seq <= total; seq++ {
		if err := src.Publish(pubsub.EncodeMessage(p.PayloadBytes, 0, seq, 0)); err != nil {
			t.Fatal(err)
		}
	}
	flushed := make(chan error, 1)
	go func() { flushed <- src.Flush() }()
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned (%v) while the broker was stopped: it cannot have the messages", err)
	case <-time.After(300 * time.Millisecond):
	}
	resume()
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	b.HaltAfter(t, 0)
	left, err := b.Backlog()
	if err != nil {
		t.Fatal(err)
	}
	if b.Received()+left != total {
		t.Errorf("right after Flush: received %d + still queued %d != published %d", b.Received(), left, total)
	}
}

// stalledBroker runs the real binary while the broker is stopped (SIGSTOP,
// as a CPU-starved broker is) across the end of publishing and longer than
// drain_ms: the sources' Flush and the receivers wait for it, and nothing is
// counted as lost.
func stalledBroker(t *testing.T, env pubsub.Env, node int) {
	bin := filepath.Join(t.TempDir(), "msgbench-rabbitmq")
	if out, err := exec.Command("go", "build", "-o", bin, "msgbench/targets/rabbitmq/cmd/msgbench-rabbitmq").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// Publishing lasts 2.5 s from about 0.3 s; the broker stops from 1.5 s
	// to 4 s, so the receivers hear nothing for 2.5 s, with drain_ms 300,
	// and the sources' Flush waits for the broker to take what is still in
	// their sockets before the published line reaches the receivers.
	resume := make(chan struct{})
	stopped := time.AfterFunc(1500*time.Millisecond, func() {
		_ = syscall.Kill(-node, syscall.SIGSTOP)
		time.AfterFunc(2500*time.Millisecond, func() {
			_ = syscall.Kill(-node, syscall.SIGCONT)
			close(resume)
		})
	})
	t.Cleanup(func() {
		if stopped.Stop() {
			return
		}
		<-resume // never leave the node stopped for the tests after
	})
	params := map[string]any{"payload_bytes": 16, "duration_s": 2.5, "sources": 1, "source_threads": 1,
		"receivers": 2, "batching_bytes": 0, "rate": 500, "drain_ms": 300}
	r := kittest.RunPubsub(t, "stalled broker", bin, []string{pubsub.EnvServiceURL + "=" + env.ServiceURL},
		"default", plain, params)
	v := r.Verify
	if v["published"] < 1000 || v["received"] != 2*v["published"] || v["lost"] != 0 || v["undelivered"] != 0 {
		t.Errorf("want every message received after the broker's stall, none lost: %v", v)
	}
}
