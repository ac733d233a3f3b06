// Package redissys is msgbench's pubsub System for Redis pub/sub through
// github.com/redis/go-redis/v9: PUBLISH from each source's connection,
// SUBSCRIBE on one connection per receiver.
package redissys

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"msgbench/kits/pubsub"
)

// System implements pubsub.System for Redis: go-redis as its docs show it,
// or with option "lean" (the tuned variant) the lean RESP codec (lean.go).
type System struct{}

var _ pubsub.System = System{}

// Check accepts every payload the workload allows: Redis takes bulk strings up
// to proto-max-bulk-len (512 MB). batching_bytes > 0 pipelines PUBLISH commands.
//
// Not lossless (target.toml): Redis pub/sub is at most once, and the server
// disconnects a subscriber whose output buffer passes
// client-output-buffer-limit pubsub (32mb hard, 8mb for 60 s by default),
// dropping what it had buffered.
func (System) Check(opts pubsub.Options, p pubsub.Params) error {
	_, err := lean(opts)
	return err
}

func lean(opts pubsub.Options) (bool, error) {
	if err := opts.Unknown("lean"); err != nil {
		return false, err
	}
	return opts.Bool("lean")
}

// options parses the service URL (redis://127.0.0.1:6379) into client options
// for one connection.
func options(env pubsub.Env) (*redis.Options, error) {
	if env.ServiceURL == "" {
		return nil, fmt.Errorf("redis: no service URL (MSGBENCH_SERVICE_URL)")
	}
	opt, err := redis.ParseURL(env.ServiceURL)
	if err != nil {
		return nil, fmt.Errorf("redis: service URL %q: %w", env.ServiceURL, err)
	}
	// One source or receiver, one connection: the workload's unit.
	opt.PoolSize = 1
	opt.MinIdleConns = 0
	// CLIENT SETINFO is Redis 7.2+; Debian 12 has 7.0, and the library would
	// send it on every connect only to have it refused.
	opt.DisableIndentity = true
	return opt, nil
}

// unreachable wraps a connection failure with the URL, so the report says
// which broker could not be reached.
func unreachable(env pubsub.Env, err error) error {
	return fmt.Errorf("redis at %s unreachable: %w", env.ServiceURL, err)
}

// ping checks the connection now rather than at the first PUBLISH.
func ping(ctx context.Context, env pubsub.Env, c *redis.Client) error {
	if err := c.Ping(ctx).Err(); err != nil {
		return unreachable(env, err)
	}
	return nil
}
