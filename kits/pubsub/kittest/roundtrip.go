// Package kittest is what the pubsub targets' tests share: RoundTrip, the
// conformance check of a System, the start of a real broker on a free port
// for one test, and a run of a target's binary through the worker protocol.
package kittest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"msgbench/kits/pubsub"
)

// RoundTrip is a System's conformance check: Params.Receivers receivers
// subscribe, Params.Sources sources connect, each publishes PerSource
// messages with real headers (the kit's encoding: source, sequence from 1,
// intended send time, filler) from a goroutine of its own and flushes, and
// every receiver's deliveries are checked per source: whole (length, header,
// filler), in order, without duplicates, and unless Lossy all of them, with
// nothing counted in Dropped and every Close successful.
type RoundTrip struct {
	System pubsub.System
	// Env is where the system lives. For a brokerless system leave Endpoints
	// empty: each receiver's Endpoint is added before the sources connect.
	Env       pubsub.Env
	Options   pubsub.Options // the variant's, as target.toml sets them
	Params    pubsub.Params
	PerSource int
	// Lossy accepts gaps (messages dropped on the way): Run checks what
	// arrived and waits until deliveries stop for Idle rather than for all.
	Lossy bool
	// Stall holds each receiver's first delivery this long: receivers that
	// fall behind while the sources publish.
	Stall time.Duration
	// Wait bounds the wait for every message (default 20 s); Idle ends a
	// Lossy wait once nothing arrived for that long (default 500 ms).
	Wait, Idle time.Duration
}

// Run runs the round trip against t and returns how many messages each
// receiver got. Problems are t.Errorf (t.Fatal when the run cannot go on).
func (rt RoundTrip) Run(t testing.TB) []int {
	t.Helper()
	if rt.Wait == 0 {
		rt.Wait = 20 * time.Second
	}
	if rt.Idle == 0 {
		rt.Idle = 500 * time.Millisecond
	}
	p := rt.Params
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.System.Check(rt.Options, p); err != nil {
		t.Fatalf("Check(%v, %+v): %v", rt.Options, p, err)
	}
	env := rt.Env
	receivers := make([]pubsub.Receiver, p.Receivers)
	checkers := make([]*checker, p.Receivers)
	closed := false
	closeReceivers := func() []error {
		if closed {
			return nil
		}
		closed = true
		errs := make([]error, len(receivers))
		for r, rc := range receivers {
			if rc != nil {
				errs[r] = rc.Close()
			}
		}
		return errs
	}
	defer closeReceivers() // when Run ends early
	for r := range receivers {
		checkers[r] = &checker{rt: &rt, last: make([]uint32, p.Sources)}
		rc, err := rt.System.Subscribe(ctx, env, rt.Options, p, r, checkers[r].deliver)
		if err != nil {
			t.Fatalf("Subscribe receiver %d: %v", r, err)
		}
		receivers[r] = rc
		if e := rc.Endpoint(); e != "" && len(rt.Env.Endpoints) == 0 {
			env.Endpoints = append(env.Endpoints, e)
		}
	}
	sources := make([]pubsub.Source, p.Sources)
	for i := range sources {
		s, err := rt.System.Connect(ctx, env, rt.Options, p, i)
		if err != nil {
			t.Fatalf("Connect source %d: %v", i, err)
		}
		defer s.Close()
		sources[i] = s
	}
	var wg sync.WaitGroup
	for i, s := range sources {
		wg.Add(1)
		go func(i int, s pubsub.Source) {
			defer wg.Done()
			for seq := 1; seq <= rt.PerSource; seq++ {
				msg := pubsub.EncodeMessage(p.PayloadBytes, uint32(i), uint32(seq), intendedNs(i, seq))
				if err := s.Publish(msg); err != nil {
					t.Errorf("source %d publish %d: %v", i, seq, err)
					return
				}
			}
			if err := s.Flush(); err != nil {
				t.Errorf("source %d flush: %v", i, err)
			}
		}(i, s)
	}
	wg.Wait()
	want := p.Sources * rt.PerSource
	deadline := time.Now().Add(rt.Wait)
	for _, c := range checkers {
		last, idle := -1, time.Now()
		for c.count() < want && time.Now().Before(deadline) {
			n := c.count()
			if n != last {
				last, idle = n, time.Now()
			} else if rt.Lossy && time.Since(idle) >= rt.Idle {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	dropped := make([]int64, len(receivers))
	for r, rc := range receivers {
		dropped[r] = rc.Dropped()
	}
	closeErrs := closeReceivers() // deliveries have ended: the counts are final
	got := make([]int, len(checkers))
	for r, c := range checkers {
		got[r] = c.n
		if closeErrs[r] != nil {
			t.Errorf("receiver %d: Close: %v", r, closeErrs[r])
		}
		if c.nBad > 0 {
			t.Errorf("%v %+v receiver %d: %d bad deliveries, first: %q", rt.Options, p, r, c.nBad, c.bad)
		}
		if !rt.Lossy && (c.n != want || dropped[r] != 0) {
			t.Errorf("%v %+v receiver %d: got %d of %d messages, %d counted dropped", rt.Options, p, r, c.n, want, dropped[r])
		}
	}
	return got
}

// intendedNs is the send time message seq of source i is stamped with:
// distinct per message, so a receiver sees whether the header came through.
func intendedNs(source, seq int) int64 { return int64(source+1)*1_000_000_000 + int64(seq) }

// checker checks what one receiver gets.
type checker struct {
	rt      *RoundTrip
	mu      sync.Mutex
	stalled bool
	last    []uint32 // per source: the last sequence number delivered
	n       int
	nBad    int
	bad     []string // the first few problems
}

func (c *checker) deliver(msg []byte) {
	problem := c.problem(msg)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rt.Stall > 0 && !c.stalled {
		// Under the lock: Run's wait counts the stall as not idle.
		c.stalled = true
		time.Sleep(c.rt.Stall)
	}
	c.n++
	if problem == "" {
		src, seq := sourceSeq(msg)
		last := c.last[src]
		switch {
		case seq <= last:
			problem = fmt.Sprintf("source %d seq %d after %d (out of order or duplicate)", src, seq, last)
		case seq != last+1 && !c.rt.Lossy:
			problem = fmt.Sprintf("source %d seq %d after %d (gap)", src, seq, last)
		}
		if seq > last {
			c.last[src] = seq
		}
	}
	if problem != "" {
		c.nBad++
		if len(c.bad) < 10 {
			c.bad = append(c.bad, problem)
		}
	}
}

// problem says what is wrong with msg on its own, or "".
func (c *checker) problem(msg []byte) string {
	p := c.rt.Params
	if len(msg) != p.PayloadBytes {
		return fmt.Sprintf("a message of %d bytes, want %d", len(msg), p.PayloadBytes)
	}
	h, ok := pubsub.DecodeHeader(msg)
	if !ok {
		return fmt.Sprintf("a message of %d bytes: no header", len(msg))
	}
	if int(h.Source) >= p.Sources || h.Seq == 0 || int(h.Seq) > c.rt.PerSource {
		return fmt.Sprintf("source %d seq %d: never sent", h.Source, h.Seq)
	}
	if h.IntendedNs != intendedNs(int(h.Source), int(h.Seq)) {
		return fmt.Sprintf("source %d seq %d: intended time %d, sent %d", h.Source, h.Seq, h.IntendedNs, intendedNs(int(h.Source), int(h.Seq)))
	}
	// The filler is the low byte of seq throughout: its first byte, and
	// every byte equal to the one before.
	if filler := msg[pubsub.HeaderBytes:]; len(filler) > 0 && (filler[0] != byte(h.Seq) || !bytes.Equal(filler[1:], filler[:len(filler)-1])) {
		return fmt.Sprintf("source %d seq %d: payload corrupt", h.Source, h.Seq)
	}
	return ""
}

func sourceSeq(msg []byte) (int, uint32) {
	h, _ := pubsub.DecodeHeader(msg)
	return int(h.Source), h.Seq
}

func (c *checker) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.n }
