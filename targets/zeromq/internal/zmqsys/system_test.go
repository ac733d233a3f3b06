package zmqsys

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"msgbench/pubsubkit"
)

// No server to start: ZeroMQ is brokerless, libzmq is linked in.

// counter checks what one receiver gets: per source, sequence numbers in order.
type counter struct {
	mu    sync.Mutex
	next  []uint32
	n     int
	bad   []string
	stall time.Duration // before the first message: a receiver that falls behind
}

func newCounter(sources int) *counter {
	c := &counter{next: make([]uint32, sources)}
	for i := range c.next {
		c.next[i] = 1
	}
	return c
}

func (c *counter) deliver(msg []byte) {
	c.mu.Lock()
	if c.n == 0 && c.stall > 0 {
		time.Sleep(c.stall)
	}
	defer c.mu.Unlock()
	src, seq := binary.LittleEndian.Uint32(msg), binary.LittleEndian.Uint32(msg[4:])
	if int(src) >= len(c.next) || seq < c.next[src] {
		c.bad = append(c.bad, fmt.Sprintf("source %d seq %d", src, seq))
	} else {
		c.next[src] = seq + 1
	}
	c.n++
}

func (c *counter) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

// roundTrip subscribes receivers, connects sources to them, publishes
// perSource messages from every source and returns what each receiver got
// (waiting until nothing more arrives).
func roundTrip(t *testing.T, variant string, p pubsubkit.Params, perSource int, stall time.Duration) []int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sys := System{}
	if err := sys.Check(variant, p); err != nil {
		t.Fatal(err)
	}
	var env pubsubkit.Env
	counters := make([]*counter, p.Receivers)
	for r := range counters {
		counters[r] = newCounter(p.Sources)
		counters[r].stall = stall
		rc, err := sys.Subscribe(ctx, env, variant, p, r, counters[r].deliver)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		env.Endpoints = append(env.Endpoints, rc.Endpoint())
	}
	var wg sync.WaitGroup
	for i := 0; i < p.Sources; i++ {
		s, err := sys.Connect(ctx, env, variant, p, i)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for seq := 1; seq <= perSource; seq++ {
				if err := s.Publish(pubsubkit.EncodeMessage(p.PayloadBytes, uint32(i), uint32(seq), 0)); err != nil {
					t.Error(err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	got := make([]int, len(counters))
	want := p.Sources * perSource
	for r, c := range counters {
		last, idle := -1, time.Now()
		for c.count() < want && time.Since(idle) < 500*time.Millisecond {
			if n := c.count(); n != last {
				last, idle = n, time.Now()
			}
			time.Sleep(10 * time.Millisecond)
		}
		got[r] = c.count()
		if len(c.bad) > 0 {
			t.Errorf("receiver %d: out of order: %.10v", r, c.bad)
		}
	}
	return got
}

// TestDefault: receivers that keep up get everything; the subscription
// handshake means even the first message is not lost to a slow joiner.
func TestDefault(t *testing.T) {
	p := pubsubkit.Params{PayloadBytes: 100, Sources: 2, SourceThreads: 1, Receivers: 2}
	for r, n := range roundTrip(t, "default", p, 500, 0) {
		if n != 1000 {
			t.Errorf("receiver %d: got %d of 1000", r, n)
		}
	}
}

// TestDefaultDrops: the same stall with the default HWM loses messages
// (the reason "default" is not lossless) rather than blocking.
func TestDefaultDrops(t *testing.T) {
	p := pubsubkit.Params{PayloadBytes: 64 << 10, Sources: 2, SourceThreads: 1, Receivers: 1}
	if n := roundTrip(t, "default", p, 3000, time.Second)[0]; n >= 6000 {
		t.Errorf("got all %d messages despite the stall: no drop at the HWM?", n)
	}
}

// TestNoDrop: receivers that stall while the sources publish far more than
// the HWMs hold still get every message; the sources block instead.
func TestNoDrop(t *testing.T) {
	p := pubsubkit.Params{PayloadBytes: 64 << 10, Sources: 2, SourceThreads: 1, Receivers: 2}
	for r, n := range roundTrip(t, "no_drop", p, 3000, time.Second) {
		if n != 6000 {
			t.Errorf("receiver %d: got %d of 6000", r, n)
		}
	}
}

func TestCheck(t *testing.T) {
	p := pubsubkit.Params{PayloadBytes: 1024, Sources: 1, SourceThreads: 1, Receivers: 1, BatchingBytes: 8192}
	if _, ok := (System{}).Check("default", p).(*pubsubkit.Unsupported); !ok {
		t.Fatal("batching_bytes > 0 accepted")
	}
	p.BatchingBytes = 0
	if err := (System{}).Check("no_drop", p); err != nil {
		t.Fatal(err)
	}
}

func TestNoReceiverAnswers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	env := pubsubkit.Env{Endpoints: []string{"tcp://127.0.0.1:1"}}
	p := pubsubkit.Params{PayloadBytes: 16, Sources: 1, Receivers: 1}
	if _, err := (System{}).Connect(ctx, env, "default", p, 0); err == nil {
		t.Fatal("Connect without a live receiver succeeded")
	}
}
