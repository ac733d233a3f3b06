package jssys

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

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
	nc       *nats.Conn
	js       jetstream.JetStream
	consumer jetstream.Consumer       // pull
	consume  jetstream.ConsumeContext // pull
	sub      *nats.Subscription       // push
	last     bool                     // deletes the stream when it closes
	// startSeq is the stream's last sequence when the consumer was made
	// (DeliverNew: it delivers every later one), so that Backlog can tell
	// what the server sent from its delivered stream sequence.
	startSeq uint64

	mu       sync.Mutex    // held during deliver, so Halt and Close can wait it out
	closed   bool          // Halt or Close: deliver is not called again
	handedOn atomic.Uint64 // messages handed to deliver (added under mu, read without it: deliver may stall)
	deliver  func([]byte)
}

// backlogWithin bounds one question about the consumer (its info).
const backlogWithin = 10 * time.Second

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
		// ManualAck with the ack right after the handler is what nats.go's own auto-ack does,
		// except for a message Halt dropped: unacked, the stream keeps it (Backlog).
		r.sub, err = legacy.Subscribe(streamSubject, func(m *nats.Msg) {
			if r.handle(m.Data) {
				_ = m.Ack()
			}
		}, nats.BindStream(streamName), nats.DeliverNew(), nats.AckExplicit(), nats.ManualAck())
		if err != nil {
			return err
		}
		info, err := r.sub.ConsumerInfo()
		if err != nil {
			return err
		}
		r.startSeq = info.Delivered.Stream
		flushCtx, cancel := context.WithTimeout(ctx, flushWithin) // FlushWithContext needs a deadline
		defer cancel()
		return r.nc.FlushWithContext(flushCtx) // the server has the consumer's interest
	}
	consumer, err := r.js.CreateConsumer(ctx, streamName, jetstream.ConsumerConfig{
		DeliverPolicy: jetstream.DeliverNewPolicy, AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		return err
	}
	r.consumer, r.startSeq = consumer, consumer.CachedInfo().Delivered.Stream
	r.consume, err = consumer.Consume(func(m jetstream.Msg) {
		if r.handle(m.Data()) {
			_ = m.Ack() // fire and forget, as Consume's users ack; a lost ack only redelivers (a duplicate, counted)
		}
	})
	return err
}

// handle hands a message on unless the receiver was halted or closed, and
// says whether it did: only a message handed on is acked.
func (r *receiver) handle(data []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.deliver(data)
	r.handedOn.Add(1)
	return true
}

// Backlog is what the stream holds for this receiver and it has not been
// handed: the messages the server has not sent it yet (the consumer's
// num_pending) plus those it sent (its delivered stream sequence since the
// consumer was made) that did not reach deliver, whether still in nats.go's
// buffer (a pull consumer asks for up to 500 ahead) or dropped by Halt.
// The server holds those as ack pending and sends them again after the ack
// wait, so they are undelivered, not lost; num_pending alone would miss them.
// Every consumer reads the whole stream from its start (no filter), so the
// stream sequences sent are the messages sent. A redelivered message is handed
// on twice and counted once: the count then errs towards loss, never the other
// way.
func (r *receiver) Backlog() (int64, error) {
	var pending, delivered uint64
	if r.sub != nil {
		info, err := r.sub.ConsumerInfo() // the legacy API's own timeout (5 s)
		if err != nil {
			return 0, fmt.Errorf("push consumer of stream %s: %w", streamName, err)
		}
		pending, delivered = info.NumPending, info.Delivered.Stream
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), backlogWithin)
		defer cancel()
		info, err := r.consumer.Info(ctx)
		if err != nil {
			return 0, fmt.Errorf("pull consumer of stream %s: %w", streamName, err)
		}
		pending, delivered = info.NumPending, info.Delivered.Stream
	}
	return max(0, int64(pending)+int64(delivered-r.startSeq)-int64(r.handedOn.Load())), nil
}

// Halt waits out a running deliver and calls it no more; a pull consumer's
// Consume stops asking for messages (what nats.go buffered is dropped:
// Backlog counts it). A push subscription stays (unsubscribing would delete
// its consumer, and with it the count): what the server still pushes is
// dropped unhanded and counted alike. The connection stays open for Backlog;
// Close ends it.
func (r *receiver) Halt() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	if r.consume != nil {
		r.consume.Stop()
	}
	return nil
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

// Close halts the receiver (Halt: a running deliver waited out, the consumer
// stopped), and the last receiver deletes the measurement's stream: nothing
// stays in the store.
func (r *receiver) Close() error {
	_ = r.Halt()
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
