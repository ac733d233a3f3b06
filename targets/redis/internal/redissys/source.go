package redissys

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"msgbench/kits/pubsub"
)

// source publishes on one topic over its own connection.
//
// batching_bytes = 0: one PUBLISH round trip per message (go-redis writes and
// flushes each command, then reads its reply).
// batching_bytes = N: PUBLISH commands are queued in a go-redis Pipeline until
// N payload bytes are pending, then sent in one write with Exec and their
// replies read together: Redis's own form of batching (pipelining).
//
// The connection is a sourceConn (conn.go): a pipeline reaches the socket in
// one write(2), not in go-redis's 4 KiB pieces.
type source struct {
	client *redis.Client
	topic  string
	ctx    context.Context

	batch   int             // batching_bytes
	pipe    redis.Pipeliner // nil when batch == 0
	pending int             // payload bytes queued in pipe
	slots   []slot          // the PUBLISH commands of a batch, reused batch after batch
	queued  int             // slots queued in pipe
}

// slot is one reusable PUBLISH command and the buffer its message argument
// is. The command is built once (its []interface{} args, the boxed channel
// name and message, the IntCmd); each batch copies the next message into the
// buffer and queues the same command again with Pipeline.Process. After
// Exec, go-redis no longer holds a command (it reads each reply into it and
// sets its error), so reusing it for the next batch is safe.
type slot struct {
	cmd *redis.IntCmd
	buf []byte
}

// Connect opens source i's connection and checks it with a PING.
func (System) Connect(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params, i int) (pubsub.Source, error) {
	if isLean, err := lean(opts); err != nil {
		return nil, err
	} else if isLean {
		s, err := connectLean(ctx, env, p, i)
		if err != nil { // not a typed nil in the interface
			return nil, err
		}
		return s, nil
	}
	opt, err := options(env)
	if err != nil {
		return nil, err
	}
	opt.Dialer = dialSource
	c := redis.NewClient(opt)
	if err := ping(ctx, env, c); err != nil {
		c.Close()
		return nil, err
	}
	s := &source{client: c, topic: pubsub.Topic(i), ctx: context.Background(), batch: p.BatchingBytes}
	if s.batch > 0 {
		s.pipe = c.Pipeline()
	}
	return s, nil
}

func (s *source) Publish(msg []byte) error {
	if s.pipe == nil {
		if err := s.client.Publish(s.ctx, s.topic, msg).Err(); err != nil {
			return fmt.Errorf("redis PUBLISH %s: %w", s.topic, err)
		}
		return nil
	}
	// The pipeline keeps the argument until Exec and the caller reuses msg:
	// queue a copy, in the next slot (made at first use, or when the
	// message's length changes).
	if s.queued == len(s.slots) {
		s.slots = append(s.slots, slot{})
	}
	sl := &s.slots[s.queued]
	if len(sl.buf) != len(msg) {
		sl.buf = make([]byte, len(msg))
		sl.cmd = redis.NewIntCmd(s.ctx, "publish", s.topic, sl.buf)
	}
	copy(sl.buf, msg)
	if err := s.pipe.Process(s.ctx, sl.cmd); err != nil {
		return fmt.Errorf("redis PUBLISH %s: %w", s.topic, err)
	}
	s.queued++
	s.pending += len(msg)
	if s.pending >= s.batch {
		return s.exec()
	}
	return nil
}

// exec sends the queued PUBLISH commands and reads their replies.
func (s *source) exec() error {
	if s.pending == 0 {
		return nil
	}
	_, err := s.pipe.Exec(s.ctx)
	s.pending = 0
	s.queued = 0
	if err != nil {
		return fmt.Errorf("redis pipelined PUBLISH %s: %w", s.topic, err)
	}
	return nil
}

// Flush sends what the pipeline still holds; without batching every PUBLISH
// has already had its reply, so Redis has delivered it to the subscribers'
// output buffers.
func (s *source) Flush() error {
	if s.pipe == nil {
		return nil
	}
	return s.exec()
}

func (s *source) Close() error {
	if s.pipe != nil {
		s.pipe.Discard()
	}
	return s.client.Close()
}

// Idle is called by the kit when a rate-limited source is about to wait for
// its next send time: a partial batch goes out now rather than waiting for
// more bytes that will not come soon.
func (s *source) Idle() error { return s.Flush() }
