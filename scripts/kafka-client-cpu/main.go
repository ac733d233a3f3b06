// Client CPU per message, franz-go against segmentio/kafka-go: N records of SIZE bytes
// produced to a fresh one-partition topic, then consumed from its start; the process's
// CPU time (getrusage) over each half. One client per process run.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	segkafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	client, addr, topic := os.Args[1], os.Args[2], os.Args[3]
	n, _ := strconv.Atoi(os.Args[4])
	size, _ := strconv.Atoi(os.Args[5])
	ctx := context.Background()
	admin, _ := kgo.NewClient(kgo.SeedBrokers(addr))
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, t)
	if _, err := req.RequestWith(ctx, admin); err != nil {
		panic(err)
	}
	admin.Close()
	time.Sleep(time.Second)
	payload := make([]byte, size)
	var prod, cons time.Duration
	var wall [2]time.Duration
	switch client {
	case "franz":
		cl, _ := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
			kgo.ProducerBatchCompression(kgo.NoCompression()))
		c0, w0 := cpu(), time.Now()
		for i := 0; i < n; i++ {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: append([]byte(nil), payload...)}, func(_ *kgo.Record, err error) {
				if err != nil {
					panic(err)
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			panic(err)
		}
		prod, wall[0] = cpu()-c0, time.Since(w0)
		cl.Close()
		rc, _ := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
		c0, w0 = cpu(), time.Now()
		got := 0
		for got < n {
			f := rc.PollFetches(ctx)
			f.EachRecord(func(*kgo.Record) { got++ })
		}
		cons, wall[1] = cpu()-c0, time.Since(w0)
		rc.Close()
	case "segmentio":
		w := &segkafka.Writer{Addr: segkafka.TCP(addr), Topic: topic, RequiredAcks: segkafka.RequireOne, Async: true,
			BatchTimeout: 10 * time.Millisecond, Completion: func(_ []segkafka.Message, err error) {
				if err != nil {
					panic(err)
				}
			}}
		c0, w0 := cpu(), time.Now()
		for i := 0; i < n; i++ {
			if err := w.WriteMessages(ctx, segkafka.Message{Value: append([]byte(nil), payload...)}); err != nil {
				panic(err)
			}
		}
		if err := w.Close(); err != nil {
			panic(err)
		}
		prod, wall[0] = cpu()-c0, time.Since(w0)
		r := segkafka.NewReader(segkafka.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: 0, MaxBytes: 10 << 20})
		c0, w0 = cpu(), time.Now()
		for got := 0; got < n; got++ {
			if _, err := r.ReadMessage(ctx); err != nil {
				panic(err)
			}
		}
		cons, wall[1] = cpu()-c0, time.Since(w0)
		r.Close()
	}
	fmt.Printf("%s size %d: produce %.2f us CPU/msg (%.0f msg/s), consume %.2f us CPU/msg (%.0f msg/s)\n", client, size,
		float64(prod.Nanoseconds())/float64(n)/1000, float64(n)/wall[0].Seconds(),
		float64(cons.Nanoseconds())/float64(n)/1000, float64(n)/wall[1].Seconds())
}
