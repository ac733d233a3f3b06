package redissys

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"msgbench/pubsubkit"
)

// source publishes on one topic over its own connection.
//
// batching_bytes = 0: one PUBLISH round trip per message (go-redis writes and
// flushes each command, then reads its reply).
// batching_bytes = N: PUBLISH commands are queued in a go-redis Pipeline until
// N payload bytes are pending, then sent in one write with Exec and their
// replies read together: Redis's own form of batching (pipelining).
type source struct {
	client *redis.Client
	topic  string
	ctx    context.Context

	batch   int             // batching_bytes
	pipe    redis.Pipeliner // nil when batch == 0
	arena   []byte          // copies of the queued messages (the caller reuses msg)
	pending int             // payload bytes queued in pipe
}

// Connect opens source i's connection and checks it with a PING.
func (System) Connect(ctx context.Context, env pubsubkit.Env, variant string, p pubsubkit.Params, i int) (pubsubkit.Source, error) {
	opt, err := options(env)
	if err != nil {
		return nil, err
	}
	c := redis.NewClient(opt)
	if err := ping(ctx, env, c); err != nil {
		c.Close()
		return nil, err
	}
	s := &source{client: c, topic: pubsubkit.Topic(i), ctx: context.Background(), batch: p.BatchingBytes}
	if s.batch > 0 {
		s.pipe = c.Pipeline()
		// One batch plus the message that overflows it: no reallocation.
		s.arena = make([]byte, 0, s.batch+p.PayloadBytes)
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
	// The pipeline keeps the argument until Exec: queue a copy. Slices taken
	// before an (unexpected) reallocation keep their old backing array.
	off := len(s.arena)
	s.arena = append(s.arena, msg...)
	s.pipe.Publish(s.ctx, s.topic, s.arena[off:len(s.arena):len(s.arena)])
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
	s.arena = s.arena[:0]
	s.pending = 0
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
