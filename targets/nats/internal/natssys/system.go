// Package natssys is NATS core pub/sub for the pubsub workload, through the
// maintained Go client nats.go: one connection per source and per receiver,
// source i publishing on msgbench.<i>, every receiver subscribed to
// msgbench.* (targets/nats/README.md).
package natssys

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"msgbench/kits/pubsub"
)

// System is the nats target's pubsub.System.
type System struct{}

// Check accepts every parameter the workload allows: nats-server's default
// max_payload (1 MiB) is the workload's largest payload.
// Its one option, "flush_each": a Flush (PING/PONG) after every Publish. Not lossless (target.toml): NATS core is at-most-once; a
// receiver that falls behind has messages dropped, by its client (pending
// limits, counted in Dropped) or by the server (slow consumer: its
// connection is closed).
func (System) Check(opts pubsub.Options, p pubsub.Params) error {
	_, err := flushEach(opts)
	return err
}

func flushEach(opts pubsub.Options) (bool, error) {
	if err := opts.Unknown("flush_each"); err != nil {
		return false, err
	}
	return opts.Bool("flush_each")
}

// connect opens one connection. Reconnecting is off: a benchmark must not
// hide a broker that went away behind a reconnect buffer, so a dead server
// fails the next Publish with an error that names it.
func connect(ctx context.Context, env pubsub.Env, name string) (*nats.Conn, error) {
	if env.ServiceURL == "" {
		return nil, errors.New("MSGBENCH_SERVICE_URL is not set: the nats target needs a nats-server")
	}
	timeout := 10 * time.Second
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	nc, err := nats.Connect(env.ServiceURL,
		nats.Name(name),
		nats.Timeout(timeout),
		nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			// Slow consumer notices and the like: reported, never fatal.
			subject := ""
			if sub != nil {
				subject = " on " + sub.Subject
			}
			fmt.Fprintf(os.Stderr, "nats %s%s: %v\n", name, subject, err)
		}))
	if err != nil {
		return nil, fmt.Errorf("connect to nats-server at %s: %w", env.ServiceURL, err)
	}
	return nc, nil
}

// Subscribe connects a receiver: see receiver.go.
func (System) Subscribe(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params,
	receiver int, deliver func([]byte)) (pubsub.Receiver, error) {
	return subscribe(ctx, env, receiver, deliver)
}

// Connect connects a source: see source.go.
func (System) Connect(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params,
	source int) (pubsub.Source, error) {
	each, err := flushEach(opts)
	if err != nil {
		return nil, err
	}
	return dialSource(ctx, env, each, source)
}
