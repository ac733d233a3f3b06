// Package tcpsys is brokerless direct TCP for the pubsub workload: every
// receiver listens, every source connects to every receiver and writes each
// message to each of its connections (the seed's LBM TCP transport). Frames
// are exactly payload_bytes long: both ends know the size from the request,
// so no length prefix is needed (or sent).
package tcpsys

import (
	"context"
	"errors"

	"msgbench/kits/pubsub"
)

// System is the tcp target's pubsub.System.
type System struct{}

// Check accepts every parameter the workload allows: TCP takes any frame size
// and any batch size, and batching_bytes = 0 really is one write(2) per
// message per connection.
// It has no options. Lossless (target.toml): TCP flow control blocks a source
// whose receiver falls behind; nothing is ever dropped.
func (System) Check(opts pubsub.Options, p pubsub.Params) error {
	return opts.Unknown()
}

// Subscribe listens for the sources on a free port of env.ListenAddress():
// 127.0.0.1, or this host's address when the sources run on another host.
func (System) Subscribe(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params,
	receiver int, deliver func([]byte)) (pubsub.Receiver, error) {
	return listen(env.ListenAddress(), p.PayloadBytes, deliver)
}

// Connect opens one connection to each receiver.
func (System) Connect(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params,
	source int) (pubsub.Source, error) {
	if len(env.Endpoints) == 0 {
		return nil, errors.New("the receivers announced no endpoints to connect to")
	}
	return dial(ctx, env.Endpoints, p.BatchingBytes)
}
