// Package kafkasys is Apache Kafka for the pubsub workload, through the Go
// client franz-go: one topic with a partition per source (source i produces
// to partition i), every receiver reading every partition from where they
// ended when it subscribed (targets/kafka/README.md).
package kafkasys

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"msgbench/kits/pubsub"
)

const (
	// recordOverhead is more than a record batch's header plus one
	// record's framing: a batch limit below payload + this could not hold
	// one message.
	recordOverhead = 512
	// retentionBytes bounds each partition within a run (the broker checks
	// every 10 s, msgbench/catalogue.py); a receiver that far behind would
	// count the deleted messages as loss.
	retentionBytes = 1 << 30
	segmentBytes   = 128 << 20
	// maxMessageBytes is the topic's largest batch: the workload's largest
	// payload (1 MiB) and its header fit.
	maxMessageBytes = 8 << 20
)

// System is the kafka target's pubsub.System.
type System struct{}

// settings are the variant's options.
type settings struct {
	acksAll bool // acks=all (the idempotent producer) rather than acks=1
}

func read(opts pubsub.Options) (settings, error) {
	if err := opts.Unknown("acks"); err != nil {
		return settings{}, err
	}
	acks, err := opts.Int("acks", 1)
	if err != nil {
		return settings{}, err
	}
	switch acks {
	case 1:
		return settings{}, nil
	case -1:
		return settings{acksAll: true}, nil
	}
	return settings{}, fmt.Errorf("option acks = %d: accepted are 1 (the leader's) and -1 (all in-sync replicas)", acks)
}

// Check accepts every parameter the workload allows.
func (System) Check(opts pubsub.Options, p pubsub.Params) error {
	_, err := read(opts)
	return err
}

// Topic is the topic of a measurement with this many sources: partition i is
// source i's. It is made once per broker and source count (a broker lives for
// a run), so a receiver starts at each partition's end.
func Topic(sources int) string { return "msgbench-" + strconv.Itoa(sources) }

func brokers(env pubsub.Env) (string, error) {
	if env.ServiceURL == "" {
		return "", errors.New("MSGBENCH_SERVICE_URL is not set: the kafka target needs a Kafka broker")
	}
	return strings.TrimPrefix(env.ServiceURL, "kafka://"), nil
}

// newClient is a client of the broker at env's URL with these options.
func newClient(env pubsub.Env, opts ...kgo.Opt) (*kgo.Client, error) {
	addr, err := brokers(env)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTimeout(10 * time.Second)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", env.ServiceURL, err)
	}
	return cl, nil
}

// ensureTopic creates the measurement's topic unless it exists.
func ensureTopic(ctx context.Context, cl *kgo.Client, p pubsub.Params) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = Topic(p.Sources), int32(p.Sources), 1
	for name, value := range map[string]string{"retention.bytes": strconv.Itoa(retentionBytes),
		"segment.bytes": strconv.Itoa(segmentBytes), "max.message.bytes": strconv.Itoa(maxMessageBytes)} {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = name, kmsg.StringPtr(value)
		t.Configs = append(t.Configs, c)
	}
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30_000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, topic := range resp.Topics {
		if err := kerr.ErrorForCode(topic.ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", topic.Topic, err)
		}
	}
	return nil
}

// endOffsets are the topic's partitions' current ends (the offset the next
// record will get), asked until every partition has a leader (a topic just
// made may not have one yet).
func endOffsets(ctx context.Context, cl *kgo.Client, p pubsub.Params) (map[int32]int64, error) {
	for {
		req := kmsg.NewPtrListOffsetsRequest()
		t := kmsg.NewListOffsetsRequestTopic()
		t.Topic = Topic(p.Sources)
		for i := 0; i < p.Sources; i++ {
			part := kmsg.NewListOffsetsRequestTopicPartition()
			part.Partition, part.Timestamp = int32(i), -1 // -1: the latest offset
			t.Partitions = append(t.Partitions, part)
		}
		req.Topics = append(req.Topics, t)
		resp, err := req.RequestWith(ctx, cl)
		// A topic just made may not be in the client's metadata yet: its
		// lookup answers UNKNOWN_TOPIC_OR_PARTITION, retriable, as below.
		if err != nil && !kerr.IsRetriable(err) {
			return nil, err
		}
		offsets := map[int32]int64{}
		retry := err
		var topics []kmsg.ListOffsetsResponseTopic
		if err == nil {
			topics = resp.Topics
		}
		for _, topic := range topics {
			for _, part := range topic.Partitions {
				if err := kerr.ErrorForCode(part.ErrorCode); err != nil {
					if !kerr.IsRetriable(err) {
						return nil, fmt.Errorf("end of %s/%d: %w", topic.Topic, part.Partition, err)
					}
					retry = err
				}
				offsets[part.Partition] = part.Offset
			}
		}
		if retry == nil && len(offsets) == p.Sources {
			return offsets, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the ends of topic %s: %v (%w)", Topic(p.Sources), retry, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Subscribe connects a receiver: see receiver.go.
func (System) Subscribe(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params, receiver int,
	deliver func([]byte)) (pubsub.Receiver, error) {
	if _, err := read(opts); err != nil {
		return nil, err
	}
	return subscribe(ctx, env, p, deliver)
}

// Connect connects a source: see source.go.
func (System) Connect(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params,
	source int) (pubsub.Source, error) {
	s, err := read(opts)
	if err != nil {
		return nil, err
	}
	return dialSource(ctx, env, s, p, source)
}
