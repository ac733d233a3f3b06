package mqttsys

import (
	"context"
	"fmt"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"msgbench/kits/pubsub"
)

// window is how many QoS 1 PUBLISHes a source keeps unacknowledged before
// waiting for the oldest PUBACK: paho's asynchronous tokens, bounded (paho
// has 65535 packet identifiers, and an unbounded window only grows memory).
const window = 4096

// qos0Window is how many QoS 0 PUBLISHes a source hands over before waiting
// for the oldest to be written. paho passes each through two unbuffered
// channels (Publish -> relay goroutine -> writer), so about two are in paho at
// once; a window of 1 made the source wait for every write, in turn with the
// writer, and arm WaitTimeout's timer for nearly every message.
const qos0Window = 4

// source is one client publishing on one topic. paho hands each PUBLISH to its
// writer goroutine, which writes it as one packet with one write; Publish
// returns once the packet is handed over, so the payload is copied (paho
// keeps the slice until written, at QoS 1 until acknowledged).
type source struct {
	env    pubsub.Env
	client mqtt.Client
	id     string
	topic  string
	qos    byte

	// tokens are the outstanding publishes, oldest first, in a ring (packets
	// are written in order).
	tokens []mqtt.Token
	head   int
	n      int
}

// Connect opens source i's client and waits for the CONNACK.
func (System) Connect(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params, i int) (pubsub.Source, error) {
	q, err := qos(opts)
	if err != nil {
		return nil, err
	}
	id := clientID("s", i)
	o, err := clientOptions(env, q, id)
	if err != nil {
		return nil, err
	}
	c := mqtt.NewClient(o)
	if err := connect(env, c); err != nil {
		return nil, err
	}
	size := qos0Window
	if q > 0 {
		size = window
	}
	return &source{env: env, client: c, id: id, topic: pubsub.Topic(i), qos: q, tokens: make([]mqtt.Token, size)}, nil
}

func (s *source) Publish(msg []byte) error {
	if s.n == len(s.tokens) {
		if err := s.waitOldest(); err != nil {
			return err
		}
	}
	t := s.client.Publish(s.topic, s.qos, false, append([]byte(nil), msg...))
	s.tokens[(s.head+s.n)%len(s.tokens)] = t
	s.n++
	// A token already done here failed (not connected, timeout): say so now.
	select {
	case <-t.Done():
		if err := t.Error(); err != nil {
			return fmt.Errorf("mqtt PUBLISH %s to %s: %w", s.topic, s.env.ServiceURL, err)
		}
	default:
	}
	return nil
}

// waitOldest waits for the oldest outstanding publish: at QoS 0 until it is
// written, at QoS 1 until its PUBACK.
func (s *source) waitOldest() error {
	t := s.tokens[s.head]
	s.tokens[s.head] = nil
	s.head = (s.head + 1) % len(s.tokens)
	s.n--
	select {
	case <-t.Done(): // already complete: no timer (WaitTimeout makes one per call)
	default:
		if !t.WaitTimeout(waitLimit) {
			return fmt.Errorf("mqtt PUBLISH %s to %s: not completed within %s", s.topic, s.env.ServiceURL, waitLimit)
		}
	}
	if err := t.Error(); err != nil {
		return fmt.Errorf("mqtt PUBLISH %s to %s: %w", s.topic, s.env.ServiceURL, err)
	}
	return nil
}

// Flush waits until every publish is written (QoS 0) or acknowledged by the
// broker (QoS 1).
func (s *source) Flush() error {
	for s.n > 0 {
		if err := s.waitOldest(); err != nil {
			return err
		}
	}
	return nil
}

func (s *source) Close() error {
	s.client.Disconnect(250)
	return forgetSession(s.env, s.qos, s.id)
}
