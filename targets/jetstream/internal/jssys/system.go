// Package jssys is NATS JetStream for the pubsub workload, through nats.go's
// jetstream package: one stream per measurement on the file store holding
// every source's subject msgbench.<i>, source i publishing with acks, every
// receiver its own consumer of the whole stream (targets/jetstream/README.md).
package jssys

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"msgbench/kits/pubsub"
)

// The stream of a measurement: receiver 0 creates it afresh (deleting what a
// previous measurement left), the last receiver deletes it when it closes, so
// the broker's store holds one measurement's messages at most.
const (
	streamName    = "msgbench"
	streamSubject = "msgbench.*"
	// streamMaxBytes bounds the file store: beyond it the oldest messages are
	// discarded, which a receiver that far behind counts as loss.
	streamMaxBytes = 4 << 30
)

// System is the jetstream target's pubsub.System.
type System struct{}

// settings are the variant's options.
type settings struct {
	syncPublish bool // Publish waits for each message's ack (js.Publish)
	push        bool // receivers on push consumers (the legacy API's js.Subscribe)
}

func read(opts pubsub.Options) (settings, error) {
	if err := opts.Unknown("sync_publish", "push"); err != nil {
		return settings{}, err
	}
	sync, err := opts.Bool("sync_publish")
	if err != nil {
		return settings{}, err
	}
	push, err := opts.Bool("push")
	return settings{syncPublish: sync, push: push}, err
}

// Check accepts every parameter the workload allows: nats-server's default
// max_payload (1 MiB) is the workload's largest payload, and batching_bytes is
// not applied (nats.go's write buffer has no size setting, README.md).
func (System) Check(opts pubsub.Options, p pubsub.Params) error {
	_, err := read(opts)
	return err
}

// connect opens one connection, reconnecting off: a broker that went away
// fails the next call with an error naming it.
func connect(ctx context.Context, env pubsub.Env, name string) (*nats.Conn, error) {
	if env.ServiceURL == "" {
		return nil, errors.New("MSGBENCH_SERVICE_URL is not set: the jetstream target needs a nats-server with JetStream")
	}
	timeout := 10 * time.Second
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	nc, err := nats.Connect(env.ServiceURL, nats.Name(name), nats.Timeout(timeout), nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			fmt.Fprintf(os.Stderr, "jetstream %s: %v\n", name, err)
		}))
	if err != nil {
		return nil, fmt.Errorf("connect to nats-server at %s: %w", env.ServiceURL, err)
	}
	return nc, nil
}

// Subscribe connects a receiver: see receiver.go.
func (System) Subscribe(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params, receiver int,
	deliver func([]byte)) (pubsub.Receiver, error) {
	s, err := read(opts)
	if err != nil {
		return nil, err
	}
	return subscribe(ctx, env, s, p, receiver, deliver)
}

// Connect connects a source: see source.go.
func (System) Connect(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params,
	source int) (pubsub.Source, error) {
	s, err := read(opts)
	if err != nil {
		return nil, err
	}
	return dialSource(ctx, env, s, source)
}

// createStream makes the measurement's stream afresh on the file store.
func createStream(ctx context.Context, js jetstream.JetStream) error {
	if err := js.DeleteStream(ctx, streamName); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return err
	}
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: streamName, Subjects: []string{streamSubject}, Storage: jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, MaxBytes: streamMaxBytes, Replicas: 1,
	})
	return err
}
