package redissys

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"msgbench/kits/pubsub"
	"msgbench/targets/redis/internal/resp"
)

// The tuned variant ("lean" option): the same commands on the wire as the
// default (a PUBLISH per message; batching_bytes = N: PUBLISHes pipelined in
// writes of about N payload bytes), written and read by the lean RESP codec
// of internal/resp instead of go-redis, with no allocation per message, and
// with a window of two batches in flight (leanSource). Receivers read pushes with the same codec from one
// connection each. A server disconnect is not retried (go-redis resubscribes;
// here the receiver counts it in Dropped and the rest shows as loss).

// readBuffer is each lean connection's read buffer: a receiver takes what
// the kernel has in reads of up to this size.
const readBuffer = 256 << 10

// dialLean opens a plain connection to the service URL's address, with AUTH
// when the URL carries a password, and checks it with a PING.
func dialLean(ctx context.Context, env pubsub.Env) (net.Conn, *resp.Reader, error) {
	opt, err := options(env)
	if err != nil {
		return nil, nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", opt.Addr)
	if err != nil {
		return nil, nil, unreachable(env, err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline) // the handshake only; cleared below
	}
	r := resp.NewReader(conn, readBuffer)
	var hello []byte
	if opt.Password != "" {
		args := [][]byte{[]byte("AUTH"), []byte(opt.Password)}
		if opt.Username != "" {
			args = [][]byte{args[0], []byte(opt.Username), args[1]}
		}
		hello = resp.AppendCommand(hello, args...)
	}
	hello = resp.AppendCommand(hello, []byte("PING"))
	_, err = conn.Write(hello)
	if err == nil && opt.Password != "" {
		_, err = r.ReadSimple()
	}
	if err == nil {
		_, err = r.ReadSimple()
	}
	if err == nil {
		err = conn.SetDeadline(time.Time{})
	}
	if err != nil {
		conn.Close()
		return nil, nil, unreachable(env, err)
	}
	return conn, r, nil
}

// leanSource publishes on one topic over its own connection.
//
// With batching, a window of two batches: batch k+1 is written before batch
// k's replies are read, so Redis has the next batch in its socket while the
// source reads the last one's answers, instead of idling for a wake-up of the
// source between batches (go-redis and redis-benchmark -P wait for every
// reply before the next write; auto-pipelining clients such as rueidis keep
// writing). At most two batches are unanswered, so neither side's buffers
// grow. Without batching, every PUBLISH waits for its reply, as default.
type leanSource struct {
	conn    net.Conn
	r       *resp.Reader
	topic   string
	url     string
	batch   int    // batching_bytes
	out     []byte // PUBLISH commands not written yet
	queued  int    // commands in out
	pending int    // payload bytes in out
	written int    // commands of the last batch written whose replies are not read yet
}

func connectLean(ctx context.Context, env pubsub.Env, p pubsub.Params, i int) (*leanSource, error) {
	conn, r, err := dialLean(ctx, env)
	if err != nil {
		return nil, err
	}
	return &leanSource{conn: conn, r: r, topic: pubsub.Topic(i), url: env.ServiceURL, batch: p.BatchingBytes,
		out: make([]byte, 0, p.BatchingBytes+p.PayloadBytes+64)}, nil
}

func (s *leanSource) Publish(msg []byte) error {
	s.out = resp.AppendPublish(s.out, s.topic, msg)
	s.queued++
	s.pending += len(msg)
	if s.batch == 0 {
		return s.Flush() // one round trip per message
	}
	if s.pending >= s.batch {
		return s.write()
	}
	return nil
}

// write sends the queued commands in one write, then reads the replies of
// the batch written before them.
func (s *leanSource) write() error {
	if s.queued == 0 {
		return nil
	}
	if _, err := s.conn.Write(s.out); err != nil {
		return fmt.Errorf("redis PUBLISH %s to %s: %w", s.topic, s.url, err)
	}
	previous := s.written
	s.written, s.out, s.queued, s.pending = s.queued, s.out[:0], 0, 0
	return s.replies(previous)
}

func (s *leanSource) replies(n int) error {
	for ; n > 0; n-- {
		if _, err := s.r.ReadInteger(); err != nil {
			return fmt.Errorf("redis PUBLISH %s to %s: %w", s.topic, s.url, err)
		}
	}
	return nil
}

// Flush writes what is queued and reads every reply still owed: each
// PUBLISH answered means Redis has put the message in the subscribers'
// output buffers.
func (s *leanSource) Flush() error {
	if err := s.write(); err != nil {
		return err
	}
	n := s.written
	s.written = 0
	return s.replies(n)
}

// Idle: a rate-limited source about to wait sends its partial batch now.
func (s *leanSource) Idle() error { return s.Flush() }

func (s *leanSource) Close() error { return s.conn.Close() }

// leanReceiver is one subscriber connection and its read loop.
type leanReceiver struct {
	conn    net.Conn
	closed  atomic.Bool
	dropped atomic.Int64
	done    chan struct{}
}

func subscribeLean(ctx context.Context, env pubsub.Env, p pubsub.Params, deliver func([]byte)) (*leanReceiver, error) {
	conn, r, err := dialLean(ctx, env)
	if err != nil {
		return nil, err
	}
	args := [][]byte{[]byte("SUBSCRIBE")}
	for i := 0; i < p.Sources; i++ {
		args = append(args, []byte(pubsub.Topic(i)))
	}
	deadline := time.Now().Add(subscribeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	_, err = conn.Write(resp.AppendCommand(nil, args...))
	// One confirmation per channel: from the last one on, every message
	// published on any of them reaches this connection.
	for got := 0; err == nil && got < p.Sources; got++ {
		var push resp.Push
		push, err = r.ReadPush()
		if err == nil && push.Kind != "subscribe" {
			err = fmt.Errorf("%w: %q before the subscribe confirmations", resp.ErrProtocol, push.Kind)
		}
	}
	if err == nil {
		err = conn.SetDeadline(time.Time{})
	}
	if err != nil {
		conn.Close()
		return nil, unreachable(env, fmt.Errorf("SUBSCRIBE: %w", err))
	}
	rc := &leanReceiver{conn: conn, done: make(chan struct{})}
	go rc.loop(r, deliver)
	return rc, nil
}

func (rc *leanReceiver) loop(r *resp.Reader, deliver func([]byte)) {
	defer close(rc.done)
	for {
		push, err := r.ReadPush()
		if err != nil {
			if !rc.closed.Load() && !errors.Is(err, net.ErrClosed) {
				// The server closed the connection (the pubsub output buffer
				// limit): counted once; what it held shows as loss.
				rc.dropped.Add(1)
			}
			return
		}
		if push.Kind == "message" {
			deliver(push.Payload)
		}
	}
}

func (rc *leanReceiver) Endpoint() string { return "" }

// Dropped is the number of times the server disconnected this subscriber (0 or 1).
func (rc *leanReceiver) Dropped() int64 { return rc.dropped.Load() }

// Close ends the read loop: deliver is not called after it returns.
func (rc *leanReceiver) Close() error {
	rc.closed.Store(true)
	err := rc.conn.Close()
	<-rc.done
	return err
}
