package jssys

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"msgbench/kits/pubsub"
)

// receiver is one connection with one consumer of its own on the whole stream
// (every source's subject), delivering only what is published after it was
// created (DeliverNew) and acking every message (AckExplicit), as users of a
// durable stream consume it:
//   - default: a pull consumer read with Consume (the jetstream package's
//     own way: it keeps up to 500 messages requested ahead);
//   - push: a push consumer through the legacy API's js.Subscribe, which acks
//     each message after the handler returns.
//
// One consumer is one subscription, so deliver runs on one goroutine, in the
// stream's order (each source's publish order).
type receiver struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	consume jetstream.ConsumeContext // pull
	sub     *nats.Subscription       // push
	last    bool                     // deletes the stream when it closes

	mu      sync.Mutex // held during deliver, so Close can wait it out
	closed  bool
	deliver func([]byte)
}

func subscribe(ctx context.Context, env pubsub.Env, s settings, p pubsub.Params, index int,
	deliver func([]byte)) (*receiver, error) {
	nc, err := connect(ctx, env, fmt.Sprintf("msgbench-receiver-%d", index))
	if err != nil {
		return nil, err
	}
	r := &receiver{nc: nc, deliver: deliver, last: index == p.Receivers-1}
	if err := r.start(ctx, s, index); err != nil {
		nc.Close()
		return nil, fmt.Errorf("consume stream %s at %s: %w", streamName, env.ServiceURL, err)
	}
	return r, nil
}

func (r *receiver) start(ctx context.Context, s settings, index int) error {
	var err error
	if r.js, err = jetstream.New(r.nc); err != nil {
		return err
	}
	if index == 0 { // the receivers subscribe one after another, 0 first (kits/pubsub/peer.go)
		if err := createStream(ctx, r.js); err != nil {
			return err
		}
	}
	if s.push {
		legacy, err := r.nc.JetStream()
		if err != nil {
			return err
		}
		r.sub, err = legacy.Subscribe(streamSubject, func(m *nats.Msg) { r.handle(m.Data) },
			nats.BindStream(streamName), nats.DeliverNew(), nats.AckExplicit())
		if err != nil {
			return err
		}
		return r.nc.FlushWithContext(ctx) // the server has the consumer's interest
	}
	consumer, err := r.js.CreateConsumer(ctx, streamName, jetstream.ConsumerConfig{
		DeliverPolicy: jetstream.DeliverNewPolicy, AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		return err
	}
	r.consume, err = consumer.Consume(func(m jetstream.Msg) {
		r.handle(m.Data())
		_ = m.Ack() // fire and forget, as Consume's users ack; a lost ack only redelivers (a duplicate, counted)
	})
	return err
}

func (r *receiver) handle(data []byte) {
	r.mu.Lock()
	if !r.closed {
		r.deliver(data)
	}
	r.mu.Unlock()
}

func (r *receiver) Endpoint() string { return "" }

// Dropped is what nats.go dropped from a push subscription's pending queue
// (slow consumer); a pull consumer asks for what it can hold and drops nothing.
func (r *receiver) Dropped() int64 {
	if r.sub == nil {
		return 0
	}
	n, err := r.sub.Dropped()
	if err != nil {
		return 0
	}
	return int64(n)
}

// Close waits for a running deliver, stops the consumer, and the last
// receiver deletes the measurement's stream: nothing stays in the store.
func (r *receiver) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	if r.consume != nil {
		r.consume.Stop()
	}
	var err error
	if r.last {
		ctx, cancel := context.WithTimeout(context.Background(), flushWithin)
		defer cancel()
		if derr := r.js.DeleteStream(ctx, streamName); derr != nil && !errors.Is(derr, jetstream.ErrStreamNotFound) {
			err = fmt.Errorf("delete stream %s: %w", streamName, derr)
		}
	}
	r.nc.Close()
	return err
}
