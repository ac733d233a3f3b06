package tcpsys

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

// minReadBytes is the least a connection reads per read(2): many small
// frames per system call, as LBM's receive side does.
const minReadBytes = 256 << 10

// receiver accepts any number of source connections; each has its own
// reading goroutine, and the frames of one read are delivered under the
// receiver's lock, so deliver calls never overlap and the lock is taken once
// per read(2), not once per frame.
type receiver struct {
	ln           net.Listener
	payloadBytes int
	deliver      func([]byte)

	mu      sync.Mutex // serializes deliver; guards conns and closed
	conns   []net.Conn
	closed  bool
	readers sync.WaitGroup
}

func listen(host string, payloadBytes int, deliver func([]byte)) (*receiver, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", host, err)
	}
	r := &receiver{ln: ln, payloadBytes: payloadBytes, deliver: deliver}
	r.readers.Add(1)
	go r.accept()
	return r, nil
}

func (r *receiver) accept() {
	defer r.readers.Done()
	for {
		conn, err := r.ln.Accept()
		if err != nil {
			return // closed
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			conn.Close()
			return
		}
		r.conns = append(r.conns, conn)
		r.readers.Add(1)
		r.mu.Unlock()
		go r.read(conn)
	}
}

// read delivers conn's frames until it ends. A frame split across reads
// waits at the front of the buffer for its rest.
func (r *receiver) read(conn net.Conn) {
	defer r.readers.Done()
	buf := make([]byte, max(minReadBytes, 2*r.payloadBytes))
	filled := 0
	for {
		n, err := conn.Read(buf[filled:])
		filled += n
		if whole := filled - filled%r.payloadBytes; whole > 0 {
			r.mu.Lock()
			for off := 0; off < whole; off += r.payloadBytes {
				r.deliver(buf[off : off+r.payloadBytes])
			}
			r.mu.Unlock()
			filled = copy(buf, buf[whole:filled])
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				fmt.Fprintf(os.Stderr, "tcp receiver: %v\n", err)
			}
			if filled > 0 {
				// A torn last frame: hand it over, the kit counts it corrupt.
				r.mu.Lock()
				r.deliver(buf[:filled])
				r.mu.Unlock()
			}
			return
		}
	}
}

func (r *receiver) Endpoint() string { return r.ln.Addr().String() }

// Dropped is always 0: TCP never drops, it blocks the source.
func (r *receiver) Dropped() int64 { return 0 }

// Close stops accepting, closes every connection and waits for the readers.
func (r *receiver) Close() error {
	r.mu.Lock()
	r.closed = true
	conns := r.conns
	r.mu.Unlock()
	err := r.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	r.readers.Wait()
	return err
}
