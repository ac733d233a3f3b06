package kafkasys

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"msgbench/kits/pubsub"
)

// receiver is one client reading every partition of the topic from where
// each ended when it subscribed: every receiver gets every message, Kafka's
// fan-out (each subscriber its own reader). Partitions are assigned directly
// rather than through a consumer group: a group of one member owns every
// partition anyway, and its join and offset commits are not the messages'
// path (README.md). One goroutine polls and delivers, partition by partition
// in offset order (each source's publish order).
type receiver struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func subscribe(ctx context.Context, env pubsub.Env, p pubsub.Params, deliver func([]byte)) (*receiver, error) {
	admin, err := newClient(env)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	if err := ensureTopic(ctx, admin, p); err != nil {
		return nil, fmt.Errorf("Kafka at %s: %w", env.ServiceURL, err)
	}
	ends, err := endOffsets(ctx, admin, p)
	if err != nil {
		return nil, fmt.Errorf("Kafka at %s: %w", env.ServiceURL, err)
	}
	cl, err := newClient(env, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{Topic(p.Sources): ends}),
		kgo.FetchMaxPartitionBytes(maxMessageBytes))
	if err != nil {
		return nil, err
	}
	pollCtx, cancel := context.WithCancel(context.Background())
	r := &receiver{cl: cl, cancel: cancel, done: make(chan struct{})}
	go r.poll(pollCtx, deliver)
	return r, nil
}

func (r *receiver) poll(ctx context.Context, deliver func([]byte)) {
	defer close(r.done)
	for {
		fetches := r.cl.PollFetches(ctx)
		if ctx.Err() != nil || fetches.IsClientClosed() {
			return
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if r.err == nil {
				r.err = fmt.Errorf("fetch %s/%d: %w", topic, partition, err)
			}
		})
		fetches.EachRecord(func(rec *kgo.Record) { deliver(rec.Value) })
	}
}

func (r *receiver) Endpoint() string { return "" }

// Dropped is 0: Kafka drops nothing; what a receiver misses shows as loss.
func (r *receiver) Dropped() int64 { return 0 }

// Close stops polling, waits for the delivering goroutine, then closes.
func (r *receiver) Close() error {
	r.cancel()
	<-r.done
	r.cl.Close()
	return r.err
}
