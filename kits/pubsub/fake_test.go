package pubsub

import (
	"context"
	"errors"
	"sync"
	"time"
)

// fakeSystem is an in-memory System: one process-wide "broker" of channels.
// Its option "fault" injects the faults the tests look for:
//
//	(none)       lossless, in order
//	lossy        receiver 0 loses every 10th message of each source
//	reorder      receiver 0 swaps each pair of messages (2k-1, 2k) of source 0
//	corrupt      receiver 0 gets every 100th message with a wrong last byte
//	duplicate    receiver 0 gets message 5 of each source twice
//	failconnect  Connect fails
//	failpublish  Publish fails at message 1000
//	stall        the broker holds receiver 0's messages after the 50th of
//	             each source for stallFor from the first one held, then
//	             delivers them; it says what it holds (Backlogger)
//	stuck        as stall, but it never delivers them until Close
type fakeSystem struct {
	mu       sync.Mutex
	subs     []*fakeReceiver
	intended map[int][]int64 // per source: the intended time of each message
	record   bool
}

func newFakeSystem() *fakeSystem { return &fakeSystem{intended: map[int][]int64{}} }

// fault is the variant's injected fault ("" for none).
func fault(opts Options) string {
	f, _ := opts["fault"].(string)
	return f
}

func (f *fakeSystem) Check(opts Options, p Params) error {
	if err := opts.Unknown("fault"); err != nil {
		return err
	}
	switch fault(opts) {
	case "", "lossy", "reorder", "corrupt", "duplicate", "failconnect", "failpublish", "stubborn", "stall", "stuck":
	default:
		return &Unsupported{Message: "fake has no fault " + fault(opts)}
	}
	if p.PayloadBytes > 65536 {
		return &Unsupported{Message: "payload_bytes too large for the fake"}
	}
	return nil
}

type fakeReceiver struct {
	index   int
	variant string
	ch      chan []byte
	done    chan struct{}
	held    []byte // reorder: the odd message waiting for its successor
	dropped int64
	broker  *fakeQueue // stall, stuck: receiver 0's messages the broker holds
	closing sync.Once
}

// stallFor is how long the stall fault's broker holds messages: several
// times the drain_ms of the tests that use it.
const stallFor = 1500 * time.Millisecond

// fakeQueue is what a stalling broker holds for one receiver.
type fakeQueue struct {
	mu      sync.Mutex
	msgs    [][]byte
	release *time.Timer // stall: delivers msgs when it fires
	halted  bool
}

// hold keeps msg in the broker; the first one held starts the stall's clock.
func (q *fakeQueue) hold(msg []byte, variant string, deliver chan<- []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.msgs = append(q.msgs, msg)
	if variant == "stall" && q.release == nil {
		q.release = time.AfterFunc(stallFor, func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			if q.halted {
				return
			}
			for _, m := range q.msgs {
				deliver <- m
			}
			q.msgs = nil
		})
	}
}

// backloggedReceiver is a fake receiver whose broker says what it holds.
type backloggedReceiver struct{ *fakeReceiver }

func (r backloggedReceiver) Backlog() (int64, error) {
	q := r.broker
	q.mu.Lock()
	defer q.mu.Unlock()
	return int64(len(q.msgs)), nil
}

// Halt stops the broker's deliveries and waits until what it already sent
// has been delivered.
func (r backloggedReceiver) Halt() error {
	q := r.broker
	q.mu.Lock()
	q.halted = true
	if q.release != nil {
		q.release.Stop()
	}
	q.mu.Unlock()
	r.stop()
	return nil
}

func (f *fakeSystem) Subscribe(ctx context.Context, env Env, opts Options, p Params, receiver int, deliver func([]byte)) (Receiver, error) {
	r := &fakeReceiver{index: receiver, variant: fault(opts), ch: make(chan []byte, 1024), done: make(chan struct{})}
	stalls := receiver == 0 && (r.variant == "stall" || r.variant == "stuck")
	if stalls {
		r.broker = &fakeQueue{}
	}
	go func() {
		defer close(r.done)
		for msg := range r.ch {
			r.handle(msg, deliver)
		}
		if r.held != nil {
			deliver(r.held)
		}
	}()
	f.mu.Lock()
	f.subs = append(f.subs, r)
	f.mu.Unlock()
	if stalls {
		return backloggedReceiver{r}, nil
	}
	return r, nil
}

// send is the broker's delivery of msg to r: held by a stalling broker, else
// on r's channel (blocking: lossless, like TCP).
func (r *fakeReceiver) send(msg []byte) {
	if h, _ := decodeHeader(msg); r.broker != nil && h.Seq > 50 {
		r.broker.hold(msg, r.variant, r.ch)
		return
	}
	r.ch <- msg
}

// handle applies the variant's fault, on receiver 0 only.
func (r *fakeReceiver) handle(msg []byte, deliver func([]byte)) {
	h, _ := decodeHeader(msg)
	if r.index != 0 {
		deliver(msg)
		return
	}
	switch r.variant {
	case "lossy":
		if h.Seq%10 == 0 {
			r.dropped++
			return
		}
	case "reorder":
		if h.Source == 0 && h.Seq%2 == 1 {
			r.held = msg
			return
		}
		if h.Source == 0 && r.held != nil {
			deliver(msg)
			deliver(r.held)
			r.held = nil
			return
		}
	case "corrupt":
		if h.Seq%100 == 0 {
			msg[len(msg)-1]++
		}
	case "duplicate":
		if h.Seq == 5 {
			deliver(msg)
		}
	}
	deliver(msg)
}

func (r *fakeReceiver) Endpoint() string { return "" }
func (r *fakeReceiver) Dropped() int64   { return r.dropped }
func (r *fakeReceiver) Close() error {
	if r.variant == "stubborn" {
		select {} // a client that never lets go: the worker must kill the peer
	}
	r.stop()
	return nil
}

// stop ends the delivery goroutine once it has delivered what r.ch holds.
func (r *fakeReceiver) stop() {
	r.closing.Do(func() {
		if r.broker != nil {
			r.broker.mu.Lock() // no release is writing to r.ch
			r.broker.halted = true
			if r.broker.release != nil {
				r.broker.release.Stop()
			}
			defer r.broker.mu.Unlock()
		}
		close(r.ch)
	})
	<-r.done
}

type fakeSource struct {
	f       *fakeSystem
	index   int
	variant string
	n       int
}

func (f *fakeSystem) Connect(ctx context.Context, env Env, opts Options, p Params, source int) (Source, error) {
	if fault(opts) == "failconnect" {
		return nil, errors.New("fake: connection refused")
	}
	return &fakeSource{f: f, index: source, variant: fault(opts)}, nil
}

func (s *fakeSource) Publish(msg []byte) error {
	s.n++
	if s.variant == "failpublish" && s.n == 1000 {
		return errors.New("fake: broker went away")
	}
	h, _ := decodeHeader(msg)
	s.f.mu.Lock()
	if s.f.record {
		s.f.intended[s.index] = append(s.f.intended[s.index], h.IntendedNs)
	}
	subs := s.f.subs
	s.f.mu.Unlock()
	for _, r := range subs {
		r.send(append([]byte(nil), msg...))
	}
	return nil
}

func (s *fakeSource) Flush() error { return nil }
func (s *fakeSource) Close() error { return nil }
