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
// fixed by the library (there is no option for it). So:
//   - default variant, any batching_bytes: plain Publish, the client's
//     ordinary call: the flusher writes promptly, never waiting for more
//     (batching_bytes = 0 is "no batching asked for"; N > 0 is not applied
//     either, the size is the library's);
//   - flush_each variant (option flush_each): every Publish is followed by
//     Flush, a PING/PONG round trip, the only way nats.go offers to put one
//     message on the wire on its own: strict one write per message, and slow.
type source struct {
	nc         *nats.Conn
	subject    string
	flushEach  bool
	serviceURL string
}

func dialSource(ctx context.Context, env pubsub.Env, flushEach bool, index int) (*source, error) {
	nc, err := connect(ctx, env, fmt.Sprintf("msgbench-source-%d", index))
	if err != nil {
		return nil, err
	}
	return &source{nc: nc, subject: pubsub.Topic(index), flushEach: flushEach,
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
