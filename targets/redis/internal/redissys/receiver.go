package redissys

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"

	"msgbench/kits/pubsub"
)

// subscribeTimeout bounds the wait for the server's subscribe confirmations.
const subscribeTimeout = 10 * time.Second

// receiver is one subscriber connection reading with an explicit Receive loop.
// PubSub.Channel() is not used: it hands each message to a Go channel and,
// when that channel stays full for its send timeout, drops the message with
// only a log line; the explicit loop drops nothing and sees every disconnect.
type receiver struct {
	client  *redis.Client
	ps      *redis.PubSub
	closed  atomic.Bool
	dropped atomic.Int64 // disconnects seen (Redis does not say how many messages)
	done    chan struct{}
}

// Subscribe opens receiver r's connection, subscribes to every source's topic,
// waits for the server to confirm each one, and starts the read loop.
func (System) Subscribe(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params, r int, deliver func([]byte)) (pubsub.Receiver, error) {
	if isLean, err := lean(opts); err != nil {
		return nil, err
	} else if isLean {
		rc, err := subscribeLean(ctx, env, p, deliver)
		if err != nil { // not a typed nil in the interface
			return nil, err
		}
		return rc, nil
	}
	opt, err := options(env)
	if err != nil {
		return nil, err
	}
	c := redis.NewClient(opt)
	topics := make([]string, p.Sources)
	for i := range topics {
		topics[i] = pubsub.Topic(i)
	}
	ps := c.Subscribe(ctx, topics...)
	if err := confirmed(ctx, ps, len(topics)); err != nil {
		ps.Close()
		c.Close()
		return nil, unreachable(env, err)
	}
	rc := &receiver{client: c, ps: ps, done: make(chan struct{})}
	go rc.loop(deliver)
	return rc, nil
}

// confirmed reads the subscribe replies: once the server has sent the n-th,
// every message published from then on reaches this connection.
func confirmed(ctx context.Context, ps *redis.PubSub, n int) error {
	deadline := time.Now().Add(subscribeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	for got := 0; got < n; {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("SUBSCRIBE: %d of %d confirmations within %s", got, n, subscribeTimeout)
		}
		m, err := ps.ReceiveTimeout(ctx, left)
		if err != nil {
			return fmt.Errorf("SUBSCRIBE: %w", err)
		}
		if s, ok := m.(*redis.Subscription); ok && s.Kind == "subscribe" {
			got++
		}
	}
	return nil
}

func (rc *receiver) loop(deliver func([]byte)) {
	defer close(rc.done)
	ctx := context.Background()
	healthy := true
	for {
		m, err := rc.ps.Receive(ctx)
		if err != nil {
			if rc.closed.Load() || errors.Is(err, redis.ErrClosed) {
				return
			}
			// The server closed the connection (typically the pubsub output
			// buffer limit); go-redis reconnects and resubscribes on the next
			// Receive. What was lost shows as a sequence gap; count the event
			// once per outage, and do not spin while the server is gone.
			if healthy {
				rc.dropped.Add(1)
				healthy = false
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		healthy = true
		if msg, ok := m.(*redis.Message); ok {
			// Read-only view of the payload string for the duration of the
			// call: no copy.
			deliver(unsafe.Slice(unsafe.StringData(msg.Payload), len(msg.Payload)))
		}
	}
}

func (rc *receiver) Endpoint() string { return "" }

// Dropped is the number of times the server disconnected this subscriber.
func (rc *receiver) Dropped() int64 { return rc.dropped.Load() }

func (rc *receiver) Close() error {
	rc.closed.Store(true)
	err := rc.ps.Close() // unblocks Receive
	<-rc.done
	if cerr := rc.client.Close(); err == nil {
		err = cerr
	}
	return err
}
