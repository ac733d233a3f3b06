package jssys

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"msgbench/kits/pubsub"
)

const (
	// asyncMaxPending is how many async publishes may await their ack
	// (nats.go's default, 4000, stated): PublishAsync blocks beyond it.
	asyncMaxPending = 4000
	// flushWithin bounds the wait for the last acks.
	flushWithin = 60 * time.Second
	// stallWait is how long PublishAsync waits for room among the pending
	// (nats.go's default, 200 ms, fails the publish with "stalled" when a
	// loaded machine's broker acks slower): room to wait is back-pressure.
	stallWait = 30 * time.Second
)

// source is one connection publishing on msgbench.<index> into the stream.
//   - default: js.PublishAsync, the acks counted as they come back; Flush
//     waits until every publish has its ack (PublishAsyncComplete);
//   - sync_publish: js.Publish, each message waiting for its ack before the
//     next (one round trip to the store per message).
type source struct {
	nc         *nats.Conn
	js         jetstream.JetStream
	subject    string
	sync       bool
	serviceURL string
	failed     atomic.Int64 // async publishes whose ack was an error
	lastErr    atomic.Value // the last such error
}

func dialSource(ctx context.Context, env pubsub.Env, s settings, index int) (*source, error) {
	nc, err := connect(ctx, env, fmt.Sprintf("msgbench-source-%d", index))
	if err != nil {
		return nil, err
	}
	src := &source{nc: nc, subject: pubsub.Topic(index), sync: s.syncPublish, serviceURL: env.ServiceURL}
	src.js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(asyncMaxPending),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			src.failed.Add(1)
			src.lastErr.Store(err)
		}))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream at %s: %w", env.ServiceURL, err)
	}
	return src, nil
}

// Publish hands one message to the stream. The kit reuses msg after the call
// and nats.go keeps an async message for a retry, so it gets its own copy.
func (s *source) Publish(msg []byte) error {
	var err error
	if s.sync {
		_, err = s.js.Publish(context.Background(), s.subject, msg)
	} else {
		_, err = s.js.PublishAsync(s.subject, append([]byte(nil), msg...), jetstream.WithStallWait(stallWait))
	}
	if err != nil {
		return fmt.Errorf("publish on %s to JetStream at %s: %w", s.subject, s.serviceURL, err)
	}
	return nil
}

// Flush waits until the stream has acked everything published.
func (s *source) Flush() error {
	select {
	case <-s.js.PublishAsyncComplete():
	case <-time.After(flushWithin):
		return fmt.Errorf("JetStream at %s: %d publishes still without an ack after %s",
			s.serviceURL, s.js.PublishAsyncPending(), flushWithin)
	}
	if n := s.failed.Load(); n > 0 {
		return fmt.Errorf("JetStream at %s refused %d publishes on %s: %v", s.serviceURL, n, s.subject, s.lastErr.Load())
	}
	return nil
}

func (s *source) Close() error {
	s.nc.Close()
	return nil
}
