package kafkasys

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"msgbench/kits/pubsub"
)

// flushWithin bounds the wait for the last acks. The client retries a broker that
// is gone until then; a variable, so that the broker-gone test need not wait 60 s.
var flushWithin = 60 * time.Second

// source is one client producing to partition <index> of the topic, the
// client's ordinary asynchronous Produce with a promise per record:
//   - acks=1 (default): the partition leader's ack, idempotence off (Kafka
//     requires acks=all for it), one produce request in flight per broker
//     (franz-go's default then, which keeps the order across retries);
//   - acks=all (option acks = -1): every in-sync replica's ack with the
//     idempotent producer, franz-go's default.
//
// Batching: franz-go batches what is buffered per partition and lingers up
// to 10 ms (its default) for more. batching_bytes = 0 keeps its batch limit
// (1,000,012 bytes, Kafka's max.message.bytes default); N > 0 sets it to N
// (the Java client's batch.size), at least one message. Compression off
// (franz-go would pick snappy; the Java client's default is none).
type source struct {
	cl         *kgo.Client
	topic      string
	partition  int32
	serviceURL string

	mu      sync.Mutex
	failed  int64
	lastErr error
}

func dialSource(ctx context.Context, env pubsub.Env, s settings, p pubsub.Params, index int) (*source, error) {
	opts := []kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ClientID(fmt.Sprintf("msgbench-source-%d", index))}
	if s.acksAll {
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	} else {
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	}
	if p.BatchingBytes > 0 {
		opts = append(opts, kgo.ProducerBatchMaxBytes(int32(max(p.BatchingBytes, p.PayloadBytes+recordOverhead))))
	} else if p.PayloadBytes+recordOverhead > 1000012 {
		opts = append(opts, kgo.ProducerBatchMaxBytes(int32(p.PayloadBytes+recordOverhead)))
	}
	cl, err := newClient(env, opts...)
	if err != nil {
		return nil, err
	}
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("connect to Kafka at %s: %w", env.ServiceURL, err)
	}
	return &source{cl: cl, topic: Topic(p.Sources), partition: int32(index), serviceURL: env.ServiceURL}, nil
}

// Publish hands one record to the client (it blocks while 10,000 records are
// buffered, franz-go's default). The kit reuses msg, so the record gets a copy.
func (s *source) Publish(msg []byte) error {
	rec := &kgo.Record{Topic: s.topic, Partition: s.partition, Value: append([]byte(nil), msg...)}
	s.cl.Produce(context.Background(), rec, s.acked)
	return s.err()
}

func (s *source) acked(_ *kgo.Record, err error) {
	if err != nil {
		s.mu.Lock()
		s.failed++
		s.lastErr = err
		s.mu.Unlock()
	}
}

func (s *source) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed > 0 {
		return fmt.Errorf("Kafka at %s refused %d records for %s/%d: %w", s.serviceURL, s.failed, s.topic, s.partition, s.lastErr)
	}
	return nil
}

// Flush sends what lingers and waits for every record's ack.
func (s *source) Flush() error {
	ctx, cancel := context.WithTimeout(context.Background(), flushWithin)
	defer cancel()
	if err := s.cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush to Kafka at %s: %w", s.serviceURL, err)
	}
	return s.err()
}

func (s *source) Close() error {
	s.cl.Close()
	return nil
}
