package natssys

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"msgbench/kits/pubsub"
)

// flushWithin bounds the end-of-publishing Flush (a PING/PONG round trip
// behind everything published).
const flushWithin = 60 * time.Second

// source is one connection publishing on msgbench.<index>.
//
// nats.go always buffers: Publish appends to the connection's 32 KiB write
// buffer (written inline when full) and kicks its flusher goroutine, which
// writes whatever has accumulated as soon as it runs. The buffer size is
// fixed by the library (there is no option for it), and the buffering cannot
// be turned off. So:
//   - batching_bytes > 0: that buffering, as the library does it (the size is
//     the library's 32 KiB, not N);
//   - batching_bytes = 0: every Publish is followed by Flush, a PING/PONG
//     round trip, the only way nats.go offers to put one message on the wire
//     on its own. Honest "no batching", and slow: one round trip per message.
type source struct {
	nc         *nats.Conn
	subject    string
	flushEach  bool
	serviceURL string
}

func dialSource(ctx context.Context, env pubsub.Env, p pubsub.Params, index int) (*source, error) {
	nc, err := connect(ctx, env, fmt.Sprintf("msgbench-source-%d", index))
	if err != nil {
		return nil, err
	}
	return &source{nc: nc, subject: pubsub.Topic(index), flushEach: p.BatchingBytes == 0,
		serviceURL: env.ServiceURL}, nil
}

// Publish copies msg into nats.go's write buffer.
func (s *source) Publish(msg []byte) error {
	if err := s.nc.Publish(s.subject, msg); err != nil {
		return fmt.Errorf("publish on %s to nats-server at %s: %w", s.subject, s.serviceURL, err)
	}
	if s.flushEach {
		return s.Flush()
	}
	return nil
}

// Flush waits until the server has processed everything published.
func (s *source) Flush() error {
	if err := s.nc.FlushTimeout(flushWithin); err != nil {
		return fmt.Errorf("flush to nats-server at %s: %w", s.serviceURL, err)
	}
	return nil
}

func (s *source) Close() error {
	s.nc.Close()
	return nil
}
