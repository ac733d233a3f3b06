package tcpsys

import (
	"context"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"msgbench/pubsubkit"
)

// collector records what one receiver got, per source, in arrival order.
type collector struct {
	mu   sync.Mutex
	seqs map[uint32][]uint32
	n    int
	bad  int
}

func (c *collector) deliver(payloadBytes int) func([]byte) {
	return func(msg []byte) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.n++
		if len(msg) != payloadBytes {
			c.bad++
			return
		}
		src := binary.LittleEndian.Uint32(msg[0:4])
		c.seqs[src] = append(c.seqs[src], binary.LittleEndian.Uint32(msg[4:8]))
	}
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Every message of every source reaches every receiver, whole and in order,
// batched or not, including a partial last batch pushed out by Flush.
func TestDeliversEverythingInOrder(t *testing.T) {
	for _, c := range []struct{ payload, batching int }{{16, 0}, {16, 8192}, {1000, 4096}, {70000, 8192}} {
		p := pubsubkit.Params{PayloadBytes: c.payload, Sources: 2, SourceThreads: 1, Receivers: 2, BatchingBytes: c.batching}
		sys := System{}
		ctx := context.Background()
		var env pubsubkit.Env
		cols := make([]*collector, p.Receivers)
		var recvs []pubsubkit.Receiver
		for i := range cols {
			cols[i] = &collector{seqs: map[uint32][]uint32{}}
			r, err := sys.Subscribe(ctx, env, "default", p, i, cols[i].deliver(c.payload))
			if err != nil {
				t.Fatal(err)
			}
			recvs = append(recvs, r)
			env.Endpoints = append(env.Endpoints, r.Endpoint())
		}
		const n = 3001 // not a whole number of batches
		for s := 0; s < p.Sources; s++ {
			src, err := sys.Connect(ctx, env, "default", p, s)
			if err != nil {
				t.Fatal(err)
			}
			for seq := 1; seq <= n; seq++ {
				if err := src.Publish(pubsubkit.EncodeMessage(c.payload, uint32(s), uint32(seq), 0)); err != nil {
					t.Fatal(err)
				}
			}
			if err := src.Flush(); err != nil {
				t.Fatal(err)
			}
			defer src.Close()
		}
		deadline := time.Now().Add(10 * time.Second)
		for _, col := range cols {
			for col.count() < n*p.Sources && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		}
		for _, r := range recvs {
			if err := r.Close(); err != nil {
				t.Error(err)
			}
		}
		for i, col := range cols {
			if col.n != n*p.Sources || col.bad != 0 {
				t.Fatalf("%+v receiver %d: got %d (%d bad), want %d", c, i, col.n, col.bad, n*p.Sources)
			}
			for src, seqs := range col.seqs {
				for k, seq := range seqs {
					if seq != uint32(k+1) {
						t.Fatalf("%+v receiver %d source %d: message %d has seq %d", c, i, src, k, seq)
					}
				}
			}
		}
	}
}

func TestCheck(t *testing.T) {
	if err := (System{}).Check("nosuch", pubsubkit.Params{}); err == nil {
		t.Error("an unknown variant was accepted")
	}
	if !(System{}).Lossless("default") {
		t.Error("tcp is lossless")
	}
}

func TestConnectRefused(t *testing.T) {
	_, err := System{}.Connect(context.Background(), pubsubkit.Env{Endpoints: []string{"127.0.0.1:1"}}, "default",
		pubsubkit.Params{PayloadBytes: 16}, 0)
	if err == nil {
		t.Fatal("connected to port 1")
	}
}
