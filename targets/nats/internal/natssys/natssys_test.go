package natssys

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"msgbench/pubsubkit"
)

// startServer runs nats-server on a free port for one test; the test skips
// when nats-server is not installed.
func startServer(t *testing.T) (url string, kill func()) {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("nats-server is not on PATH (Debian package nats-server): skipping the tests against a real server")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", fmt.Sprint(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(kill)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server did not listen on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "nats://" + addr, kill
}

type collector struct {
	mu   sync.Mutex
	seqs map[uint32][]uint32
	n    int
}

func (c *collector) deliver(msg []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	src := binary.LittleEndian.Uint32(msg[0:4])
	c.seqs[src] = append(c.seqs[src], binary.LittleEndian.Uint32(msg[4:8]))
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func TestDeliversEverythingInOrder(t *testing.T) {
	url, _ := startServer(t)
	for _, batching := range []int{0, 8192} {
		p := pubsubkit.Params{PayloadBytes: 200, Sources: 2, Receivers: 2, BatchingBytes: batching}
		env := pubsubkit.Env{ServiceURL: url}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sys := System{}
		cols := make([]*collector, p.Receivers)
		var recvs []pubsubkit.Receiver
		for i := range cols {
			cols[i] = &collector{seqs: map[uint32][]uint32{}}
			r, err := sys.Subscribe(ctx, env, "default", p, i, cols[i].deliver)
			if err != nil {
				t.Fatal(err)
			}
			recvs = append(recvs, r)
		}
		const n = 2000
		for s := 0; s < p.Sources; s++ {
			src, err := sys.Connect(ctx, env, "default", p, s)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			for seq := 1; seq <= n; seq++ {
				if err := src.Publish(pubsubkit.EncodeMessage(p.PayloadBytes, uint32(s), uint32(seq), 0)); err != nil {
					t.Fatal(err)
				}
			}
			if err := src.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for _, col := range cols {
			for col.count() < n*p.Sources && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		}
		for i, r := range recvs {
			if d := r.Dropped(); d != 0 {
				t.Errorf("receiver %d dropped %d", i, d)
			}
			if err := r.Close(); err != nil {
				t.Error(err)
			}
		}
		for i, col := range cols {
			if col.n != n*p.Sources {
				t.Fatalf("batching %d receiver %d: got %d, want %d", batching, i, col.n, n*p.Sources)
			}
			for src, seqs := range col.seqs {
				for k, seq := range seqs {
					if seq != uint32(k+1) {
						t.Fatalf("batching %d receiver %d source %d: message %d has seq %d", batching, i, src, k, seq)
					}
				}
			}
		}
	}
}

// A broker that dies mid-run fails the next publish with an error naming it.
func TestBrokerGone(t *testing.T) {
	url, kill := startServer(t)
	p := pubsubkit.Params{PayloadBytes: 64, Sources: 1, Receivers: 1, BatchingBytes: 0}
	src, err := System{}.Connect(context.Background(), pubsubkit.Env{ServiceURL: url}, "default", p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	kill()
	var perr error
	for i := 0; i < 100 && perr == nil; i++ {
		perr = src.Publish(pubsubkit.EncodeMessage(64, 0, uint32(i+1), 0))
		time.Sleep(10 * time.Millisecond)
	}
	if perr == nil || !strings.Contains(perr.Error(), url) {
		t.Fatalf("publishing to a dead server: %v", perr)
	}
}

func TestUnreachable(t *testing.T) {
	_, err := System{}.Connect(context.Background(), pubsubkit.Env{ServiceURL: "nats://127.0.0.1:1"}, "default",
		pubsubkit.Params{PayloadBytes: 16}, 0)
	if err == nil || !strings.Contains(err.Error(), "nats://127.0.0.1:1") {
		t.Fatalf("got %v", err)
	}
	_, err = System{}.Connect(context.Background(), pubsubkit.Env{}, "default", pubsubkit.Params{PayloadBytes: 16}, 0)
	if err == nil || !strings.Contains(err.Error(), "MSGBENCH_SERVICE_URL") {
		t.Fatalf("got %v", err)
	}
}
