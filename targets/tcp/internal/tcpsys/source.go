package tcpsys

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
)

// source holds one connection per receiver. Unbatched, each message is one
// Write (one write(2)) per connection, TCP_NODELAY on (Go's default), so
// each message leaves on its own. Batched, each connection has a
// bufio.Writer of batching_bytes: messages accumulate until the next one
// does not fit, then one write(2) sends the batch (the seed's
// implicit_batching_minimum_length). A partial batch goes out on Flush (end
// of publishing) and on Idle (a rate-limited source about to wait for its
// next send time), so a slow rate never leaves messages sitting in a buffer;
// LBM's 200 ms implicit_batching_interval timer is not needed for that.
type source struct {
	conns   []*net.TCPConn
	writers []io.Writer     // the conn itself, or its bufio.Writer
	batches []*bufio.Writer // nil when unbatched
}

func dial(ctx context.Context, endpoints []string, batchingBytes int) (*source, error) {
	s := &source{}
	var d net.Dialer
	for _, ep := range endpoints {
		c, err := d.DialContext(ctx, "tcp", ep)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("connect to the receiver at %s: %w", ep, err)
		}
		conn := c.(*net.TCPConn)
		if err := conn.SetNoDelay(true); err != nil {
			s.Close()
			return nil, err
		}
		s.conns = append(s.conns, conn)
		if batchingBytes > 0 {
			w := bufio.NewWriterSize(conn, batchingBytes)
			s.batches = append(s.batches, w)
			s.writers = append(s.writers, w)
		} else {
			s.writers = append(s.writers, conn)
		}
	}
	return s, nil
}

// Publish writes msg to every receiver's connection; a full socket buffer
// blocks it (flow control), so nothing is lost.
func (s *source) Publish(msg []byte) error {
	for i, w := range s.writers {
		if _, err := w.Write(msg); err != nil {
			return fmt.Errorf("write to the receiver at %s: %w", s.conns[i].RemoteAddr(), err)
		}
	}
	return nil
}

// Flush writes out partial batches; once in the kernel, TCP delivers them.
func (s *source) Flush() error {
	for i, w := range s.batches {
		if err := w.Flush(); err != nil {
			return fmt.Errorf("flush to the receiver at %s: %w", s.conns[i].RemoteAddr(), err)
		}
	}
	return nil
}

// Idle is Flush: the source is about to wait, so a partial batch goes now.
func (s *source) Idle() error { return s.Flush() }

func (s *source) Close() error {
	var first error
	for _, c := range s.conns {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
