package redissys

import (
	"context"
	"net"
)

// maxPending bounds what sourceConn holds back: a larger pipeline goes out in
// writes of about this size.
const maxPending = 1 << 20

// sourceConn is a source's connection as go-redis sees it (Options.Dialer):
// it holds go-redis's writes back until go-redis reads, then sends them in one
// write(2).
//
// go-redis v9.7 writes through a 4 KiB bufio.Writer of its own (its size is
// not an option before v9.12), so a pipeline of 8 KiB of PUBLISH commands
// reached the socket in three or more writes, and an 8 KiB PUBLISH in three:
// each a system call on the source's thread, and each a separate read and a
// partial command for redis-server to buffer. Every request go-redis makes
// on a source's connection (HELLO, PING, PUBLISH, a pipeline) is written in
// full and then answered, so holding the bytes until the first Read changes
// nothing but the number of writes: one per pipeline, as redis-benchmark -P
// does. The bytes go to the socket before Read waits, never later.
//
// It does not implement syscall.Conn, so go-redis skips its per-request
// connCheck (a non-blocking read(2) on every pool Get): a connection the
// server closed still shows as an error on the next write or read.
type sourceConn struct {
	net.Conn
	pending []byte
}

func dialSource(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &sourceConn{Conn: c}, nil
}

func (c *sourceConn) Write(b []byte) (int, error) {
	if len(c.pending)+len(b) > maxPending {
		if err := c.flush(); err != nil {
			return 0, err
		}
		if len(b) > maxPending {
			return c.Conn.Write(b)
		}
	}
	c.pending = append(c.pending, b...)
	return len(b), nil
}

// Read sends what Write held back, then reads.
func (c *sourceConn) Read(b []byte) (int, error) {
	if err := c.flush(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *sourceConn) flush() error {
	if len(c.pending) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.pending)
	c.pending = c.pending[:0]
	return err
}
