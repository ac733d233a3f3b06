package redissys

import (
	"context"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// startRedis starts redis-server on a free loopback port for this test and
// stops it in Cleanup; the test is skipped when redis-server is not installed.
func startRedis(t *testing.T) pubsub.Env {
	t.Helper()
	bin := kittest.Binary(t, "apt-get install redis-server", "redis-server")
	srv := kittest.StartServer(t, bin, func(port int) []string {
		return []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "",
			"--appendonly", "no", "--dir", t.TempDir(), "--daemonize", "no"}
	})
	return pubsub.Env{ServiceURL: "redis://" + srv.Addr}
}

// roundTrip subscribes receivers, publishes perSource messages from every
// source, and checks every receiver got all of them in order.
func roundTrip(t *testing.T, p pubsub.Params, perSource int) {
	env := startRedis(t)
	kittest.RoundTrip{System: System{}, Env: env, Params: p, PerSource: perSource}.Run(t)
}

func TestPublishPerMessage(t *testing.T) {
	roundTrip(t, pubsub.Params{PayloadBytes: 100, Sources: 2, SourceThreads: 1, Receivers: 2}, 2000)
}

func TestPipelinedBatches(t *testing.T) {
	// 8192-byte batches of 1000-byte messages, and a partial batch left for Flush.
	roundTrip(t, pubsub.Params{PayloadBytes: 1000, Sources: 2, SourceThreads: 1, Receivers: 3, BatchingBytes: 8192}, 1001)
}

// The tuned variant (lean RESP codec): the same deliveries, per message and
// pipelined, with a partial batch left for Flush.
func TestLean(t *testing.T) {
	env := startRedis(t)
	lean := pubsub.Options{"lean": true}
	for _, p := range []pubsub.Params{
		{PayloadBytes: 16, Sources: 2, SourceThreads: 1, Receivers: 2},
		{PayloadBytes: 1000, Sources: 3, SourceThreads: 1, Receivers: 2, BatchingBytes: 8192},
		{PayloadBytes: 70000, Sources: 1, SourceThreads: 1, Receivers: 1, BatchingBytes: 8192}, // beyond a read buffer
	} {
		kittest.RoundTrip{System: System{}, Env: env, Options: lean, Params: p, PerSource: 1001}.Run(t)
	}
	if err := (System{}).Check(pubsub.Options{"lean": 1}, pubsub.Params{PayloadBytes: 16}); err == nil {
		t.Error("lean = 1 accepted")
	}
	if err := (System{}).Check(pubsub.Options{"fast": true}, pubsub.Params{PayloadBytes: 16}); err == nil {
		t.Error("an unknown option accepted")
	}
}

func TestUnreachable(t *testing.T) {
	port := kittest.FreePort(t)
	env := pubsub.Env{ServiceURL: "redis://127.0.0.1:" + strconv.Itoa(port)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := pubsub.Params{PayloadBytes: 16, Sources: 1, Receivers: 1}
	if _, err := (System{}).Connect(ctx, env, pubsub.Options{}, p, 0); err == nil {
		t.Fatal("Connect to a closed port succeeded")
	}
	if _, err := (System{}).Subscribe(ctx, env, pubsub.Options{}, p, 0, func([]byte) {}); err == nil {
		t.Fatal("Subscribe to a closed port succeeded")
	}
	lean := pubsub.Options{"lean": true}
	if s, err := (System{}).Connect(ctx, env, lean, p, 0); err == nil || s != nil || !strings.Contains(err.Error(), env.ServiceURL) {
		t.Fatalf("lean Connect to a closed port: %v, %v", s, err)
	}
	if r, err := (System{}).Subscribe(ctx, env, lean, p, 0, func([]byte) {}); err == nil || r != nil {
		t.Fatalf("lean Subscribe to a closed port: %v, %v", r, err)
	}
}

// TestOutputBufferDisconnect: a subscriber that falls behind past
// client-output-buffer-limit pubsub is disconnected by the server; the
// receiver counts it in Dropped, keeps going (go-redis resubscribes), and
// the missed messages show as a sequence gap rather than a hang.
func TestOutputBufferDisconnect(t *testing.T) {
	env := startRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := pubsub.Params{PayloadBytes: 4096, Sources: 1, SourceThreads: 1, Receivers: 1}
	sys := System{}
	admin, err := sys.Connect(ctx, env, pubsub.Options{}, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.(*source).client.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 256kb 0 0").Err(); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var got sync.Map
	n := 0
	rc, err := sys.Subscribe(ctx, env, pubsub.Options{}, p, 0, func(msg []byte) {
		if n == 0 {
			<-release // stall on the first message while the buffer fills
		}
		n++
		got.Store(n, true)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	for seq := 1; seq <= 2000; seq++ { // 8 MB against a 256 KB limit
		if err := admin.Publish(pubsub.EncodeMessage(p.PayloadBytes, 0, uint32(seq), 0)); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	for deadline := time.Now().Add(10 * time.Second); rc.Dropped() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if rc.Dropped() == 0 {
		t.Fatal("the server's disconnect was not counted")
	}
	// Subscribed again after the disconnect: a new message still arrives.
	before := 0
	got.Range(func(k, _ any) bool { before = max(before, k.(int)); return true })
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		admin.Publish(pubsub.EncodeMessage(p.PayloadBytes, 0, 5000, 0))
		after := 0
		got.Range(func(k, _ any) bool { after = max(after, k.(int)); return true })
		if after > before {
			return
		}
	}
	t.Fatal("no message after the receiver's reconnect")
}

func TestLargeMessages(t *testing.T) {
	// Messages above sourceConn's maxPending, pipelined and one by one.
	roundTrip(t, pubsub.Params{PayloadBytes: 1_500_000, Sources: 1, SourceThreads: 1, Receivers: 1, BatchingBytes: 3_000_000}, 5)
	roundTrip(t, pubsub.Params{PayloadBytes: 8192, Sources: 1, SourceThreads: 1, Receivers: 1}, 300)
}

// writeCounter is a net.Conn that records its writes.
type writeCounter struct {
	net.Conn
	writes []int
}

func (w *writeCounter) Write(b []byte) (int, error) {
	w.writes = append(w.writes, len(b))
	return len(b), nil
}
func (w *writeCounter) Read([]byte) (int, error) { return 0, io.EOF }

func TestSourceConnOneWritePerRequest(t *testing.T) {
	wc := &writeCounter{}
	c := &sourceConn{Conn: wc}
	for i := 0; i < 5; i++ {
		c.Write(make([]byte, 4096))
	}
	if len(wc.writes) != 0 {
		t.Fatalf("wrote %v before the read", wc.writes)
	}
	c.Read(make([]byte, 16))
	c.Write(make([]byte, maxPending+1)) // too large to hold: goes at once
	if want := []int{5 * 4096, maxPending + 1}; !slices.Equal(wc.writes, want) {
		t.Fatalf("writes %v, want %v", wc.writes, want)
	}
}
