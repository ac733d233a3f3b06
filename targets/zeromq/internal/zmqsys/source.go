package zmqsys

import (
	"context"
	"fmt"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"msgbench/kits/pubsub"
)

// joinLimit bounds the wait for the receivers' subscriptions.
const joinLimit = 10 * time.Second

// lingerOnClose is how long libzmq keeps sending queued messages of a closed
// socket while the process lives (it matters only at context termination).
const lingerOnClose = 5 * time.Second

// source is one XPUB socket connected to every receiver. XPUB is PUB that
// also hands the subscriptions it receives to the application: Connect uses
// them to know when every receiver's subscription is in place (the
// "slow joiner": a PUB drops whatever it sends before that).
type source struct {
	sock  *zmq.Socket
	topic []byte
}

// Connect creates source i's XPUB socket, connects it to every receiver's
// endpoint, and returns once each receiver's subscription to this source's
// topic has arrived: from then on every message goes to every receiver.
func (System) Connect(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params, i int) (pubsub.Source, error) {
	nd, err := noDrop(opts)
	if err != nil {
		return nil, err
	}
	if len(env.Endpoints) == 0 {
		return nil, fmt.Errorf("zeromq: no receiver endpoints to connect to")
	}
	sock, err := zmq.NewSocket(zmq.XPUB)
	if err != nil {
		return nil, fmt.Errorf("zeromq: XPUB socket: %w", err)
	}
	s := &source{sock: sock, topic: []byte(pubsub.Topic(i))}
	if err := s.setUp(ctx, env.Endpoints, hwm(nd, p.PayloadBytes), nd); err != nil {
		sock.SetLinger(0)
		sock.Close()
		return nil, err
	}
	return s, nil
}

func (s *source) setUp(ctx context.Context, endpoints []string, hwm int, noDrop bool) error {
	sock := s.sock
	if err := sock.SetSndhwm(hwm); err != nil {
		return fmt.Errorf("zeromq: ZMQ_SNDHWM: %w", err)
	}
	if noDrop {
		if err := sock.SetXpubNodrop(true); err != nil {
			return fmt.Errorf("zeromq: ZMQ_XPUB_NODROP: %w", err)
		}
	}
	// Every receiver's subscription, not only the first of each topic.
	if err := sock.SetXpubVerbose(1); err != nil {
		return fmt.Errorf("zeromq: ZMQ_XPUB_VERBOSE: %w", err)
	}
	if err := sock.SetLinger(lingerOnClose); err != nil {
		return fmt.Errorf("zeromq: ZMQ_LINGER: %w", err)
	}
	for _, ep := range endpoints {
		if err := sock.Connect(ep); err != nil {
			return fmt.Errorf("zeromq: connect %s: %w", ep, err)
		}
	}
	return s.awaitSubscriptions(ctx, len(endpoints))
}

// awaitSubscriptions reads subscription messages (0x01 + topic) until n of
// them are for this source's topic: one from each receiver.
func (s *source) awaitSubscriptions(ctx context.Context, n int) error {
	deadline := time.Now().Add(joinLimit)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := s.sock.SetRcvtimeo(100 * time.Millisecond); err != nil {
		return fmt.Errorf("zeromq: ZMQ_RCVTIMEO: %w", err)
	}
	want := append([]byte{1}, s.topic...)
	for got := 0; got < n; {
		if time.Now().After(deadline) {
			return fmt.Errorf("zeromq: %d of %d receivers subscribed to %s within %s (is every receiver up?)", got, n, s.topic, joinLimit)
		}
		m, err := s.sock.RecvBytes(0)
		if err != nil {
			if zmq.AsErrno(err) == zmq.Errno(syscall.EAGAIN) { // RCVTIMEO passed
				continue
			}
			return fmt.Errorf("zeromq: reading subscriptions: %w", err)
		}
		if string(m) == string(want) {
			got++
		}
	}
	return nil
}

// Publish sends the topic frame and the message. "default": a receiver whose
// queue is at the HWM silently misses it. "no_drop": blocks until every
// receiver's queue has room.
func (s *source) Publish(msg []byte) error {
	if _, err := s.sock.SendBytes(s.topic, zmq.SNDMORE); err != nil {
		return fmt.Errorf("zeromq: send %s: %w", s.topic, err)
	}
	if _, err := s.sock.SendBytes(msg, 0); err != nil {
		return fmt.Errorf("zeromq: send %s: %w", s.topic, err)
	}
	return nil
}

// Flush has nothing to push: a sent message is in libzmq's queue and its I/O
// thread writes it as soon as the connection takes it. ZeroMQ has no
// acknowledgement to wait for; the receivers' drain covers the tail.
func (s *source) Flush() error { return nil }

func (s *source) Close() error { return s.sock.Close() }
