package kafkasys

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"msgbench/kits/pubsub"
)

// backlogWithin bounds one question about the partitions' ends (ListOffsets):
// the kit waits for the answer in a goroutine of its own, and a broker that
// does not answer counts what the receiver lacks as lost.
const backlogWithin = 10 * time.Second

// receiver is one client reading every partition of the topic from where
// each ended when it subscribed: every receiver gets every message, Kafka's
// fan-out (each subscriber its own reader). Partitions are assigned directly
// rather than through a consumer group: a group of one member owns every
// partition anyway, and its join and offset commits are not the messages'
// path (README.md). One goroutine polls and delivers, partition by partition
// in offset order (each source's publish order).
//
// next[i] is the offset after the last record of partition i handed to
// deliver: the receiver's own position, which Backlog sets against the
// partition's end (a consumer's lag, as kafka-consumer-groups shows it).
type receiver struct {
	cl     *kgo.Client
	p      pubsub.Params
	next   []atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

var _ pubsub.Backlogger = (*receiver)(nil)

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
	r := &receiver{p: p, next: make([]atomic.Int64, p.Sources), done: make(chan struct{})}
	starts := map[int32]kgo.Offset{}
	for partition, end := range ends {
		starts[partition] = kgo.NewOffset().At(end)
		r.next[partition].Store(end)
	}
	r.cl, err = newClient(env, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{Topic(p.Sources): starts}),
		kgo.FetchMaxPartitionBytes(maxMessageBytes))
	if err != nil {
		return nil, err
	}
	pollCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
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
		fetches.EachRecord(func(rec *kgo.Record) {
			deliver(rec.Value)
			r.next[rec.Partition].Store(rec.Offset + 1)
		})
	}
}

func (r *receiver) Endpoint() string { return "" }

// Dropped is 0: Kafka drops nothing; what a receiver misses shows as loss.
func (r *receiver) Dropped() int64 { return 0 }

// Backlog is the receiver's lag: over every partition, the partition's end
// now (ListOffsets) less the offset after the last record delivered. What
// the client fetched and buffered but has not delivered is in it: the
// broker still holds those records (its log keeps them within retention),
// so they are undelivered, not lost.
func (r *receiver) Backlog() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), backlogWithin)
	defer cancel()
	ends, err := endOffsets(ctx, r.cl, r.p)
	if err != nil {
		return 0, fmt.Errorf("the ends of topic %s: %w", Topic(r.p.Sources), err)
	}
	var lag int64
	for partition, end := range ends {
		lag += max(0, end-r.next[partition].Load())
	}
	return lag, nil
}

// Halt stops polling and returns once the delivering goroutine has ended:
// every record it handed to deliver has advanced next, and nothing more
// will, so a Backlog after it counts exactly what never reached the
// receiver. The client stays open for that question; Close closes it.
func (r *receiver) Halt() error {
	r.cancel()
	<-r.done
	return nil
}

// Close stops polling, waits for the delivering goroutine, then closes.
func (r *receiver) Close() error {
	r.cancel()
	<-r.done
	r.cl.Close()
	return r.err
}
