package kittest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"msgbench/kits/pubsub"
)

// loopback is an in-memory System: each Publish goes straight to every
// receiver, through mangle when set (which may drop, alter or repeat it).
type loopback struct {
	mu        sync.Mutex
	receivers []func([]byte)
	mangle    func(msg []byte, deliver func([]byte))
	dropped   int64
}

type loopbackReceiver struct{ l *loopback }
type loopbackSource struct{ l *loopback }

func (l *loopback) Check(pubsub.Options, pubsub.Params) error { return nil }
func (l *loopback) Subscribe(_ context.Context, _ pubsub.Env, _ pubsub.Options, _ pubsub.Params, _ int, deliver func([]byte)) (pubsub.Receiver, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.receivers = append(l.receivers, deliver)
	return loopbackReceiver{l}, nil
}
func (l *loopback) Connect(context.Context, pubsub.Env, pubsub.Options, pubsub.Params, int) (pubsub.Source, error) {
	return loopbackSource{l}, nil
}
func (r loopbackReceiver) Endpoint() string { return "" }
func (r loopbackReceiver) Dropped() int64   { return r.l.dropped }
func (r loopbackReceiver) Close() error     { return nil }
func (s loopbackSource) Flush() error       { return nil }
func (s loopbackSource) Close() error       { return nil }
func (s loopbackSource) Publish(msg []byte) error {
	s.l.mu.Lock() // one lock: deliveries to a receiver never run concurrently
	defer s.l.mu.Unlock()
	for _, deliver := range s.l.receivers {
		if s.l.mangle != nil {
			s.l.mangle(append([]byte(nil), msg...), deliver)
		} else {
			deliver(msg)
		}
	}
	return nil
}

// recorder is a testing.TB that keeps what Run reports.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func seqOf(msg []byte) uint32 { h, _ := pubsub.DecodeHeader(msg); return h.Seq }

func TestRoundTrip(t *testing.T) {
	var held []byte
	for _, c := range []struct {
		name   string
		lossy  bool
		mangle func(msg []byte, deliver func([]byte))
		drops  int64
		want   string // in a reported error; "" for none
	}{
		{name: "intact"},
		{name: "gap", mangle: func(m []byte, d func([]byte)) {
			if seqOf(m) != 7 {
				d(m)
			}
		}, want: "(gap)"},
		{name: "gap lossy", lossy: true, mangle: func(m []byte, d func([]byte)) {
			if seqOf(m) != 7 {
				d(m)
			}
		}},
		{name: "reordered", lossy: true, mangle: func(m []byte, d func([]byte)) {
			if seqOf(m) == 5 {
				held = m
				return
			}
			d(m)
			if seqOf(m) == 6 {
				d(held)
			}
		}, want: "out of order"},
		{name: "duplicate", lossy: true, mangle: func(m []byte, d func([]byte)) { d(m); d(m) }, want: "duplicate"},
		{name: "filler", mangle: func(m []byte, d func([]byte)) { m[len(m)-1]++; d(m) }, want: "payload corrupt"},
		{name: "header", mangle: func(m []byte, d func([]byte)) { m[8]++; d(m) }, want: "intended time"},
		{name: "short", mangle: func(m []byte, d func([]byte)) { d(m[:len(m)-1]) }, want: "bytes, want"},
		{name: "dropped counted", drops: 1, want: "counted dropped"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sys := &loopback{mangle: c.mangle, dropped: c.drops}
			rec := &recorder{TB: t}
			p := pubsub.Params{PayloadBytes: 64, Sources: 1, SourceThreads: 1, Receivers: 2}
			got := RoundTrip{System: sys, Params: p, PerSource: 20, Lossy: c.lossy, Wait: time.Second, Idle: 100 * time.Millisecond}.Run(rec)
			report := strings.Join(rec.errors, "\n")
			if c.want == "" && report != "" || !strings.Contains(report, c.want) {
				t.Errorf("want an error with %q, got %q", c.want, report)
			}
			if c.name == "intact" && (got[0] != 20 || got[1] != 20) {
				t.Errorf("got %v", got)
			}
		})
	}
}
