package mqttsys

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"msgbench/pubsubkit"
)

// mosquittoConf is the harness's (msgbench/services.py): no per-client queue
// limit, which the qos1 variant's lossless claim needs.
const mosquittoConf = `listener %d 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 0
max_queued_bytes 0
max_inflight_messages 0
message_size_limit 0
log_dest stderr
log_type error
`

// startMosquitto starts mosquitto on a free loopback port with extra config
// lines, stops it in Cleanup, and skips the test when it is not installed.
func startMosquitto(t *testing.T, extra string) pubsubkit.Env {
	t.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/mosquitto"); err != nil {
			t.Skip("mosquitto not installed (apt-get install mosquitto): skipping the test against a real broker")
		}
	}
	port := freePort(t)
	conf := filepath.Join(t.TempDir(), "mosquitto.conf")
	if os.Geteuid() == 0 {
		extra += "user root\n"
	}
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(mosquittoConf, port)+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mosquitto not listening on %s within 10 s", addr)
		}
	}
	return pubsubkit.Env{ServiceURL: "mqtt://" + addr}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// counter checks what one receiver gets: per source, sequence numbers in order.
type counter struct {
	mu   sync.Mutex
	next []uint32
	n    int
	bad  []string
}

func newCounter(sources int) *counter {
	c := &counter{next: make([]uint32, sources)}
	for i := range c.next {
		c.next[i] = 1
	}
	return c
}

func (c *counter) deliver(msg []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	src, seq := binary.LittleEndian.Uint32(msg), binary.LittleEndian.Uint32(msg[4:])
	if int(src) >= len(c.next) || seq != c.next[src] {
		c.bad = append(c.bad, fmt.Sprintf("source %d seq %d", src, seq))
	} else {
		c.next[src]++
	}
	c.n++
}

func (c *counter) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

// roundTrip subscribes receivers, publishes perSource messages from every
// source, and checks every receiver got all of them in order.
func roundTrip(t *testing.T, env pubsubkit.Env, variant string, p pubsubkit.Params, perSource int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sys := System{}
	if err := sys.Check(variant, p); err != nil {
		t.Fatal(err)
	}
	counters := make([]*counter, p.Receivers)
	for r := range counters {
		counters[r] = newCounter(p.Sources)
		rc, err := sys.Subscribe(ctx, env, variant, p, r, counters[r].deliver)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
	}
	for i := 0; i < p.Sources; i++ {
		s, err := sys.Connect(ctx, env, variant, p, i)
		if err != nil {
			t.Fatal(err)
		}
		for seq := 1; seq <= perSource; seq++ {
			if err := s.Publish(pubsubkit.EncodeMessage(p.PayloadBytes, uint32(i), uint32(seq), 0)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
	}
	want := p.Sources * perSource
	for r, c := range counters {
		for deadline := time.Now().Add(20 * time.Second); c.count() < want && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if got := c.count(); got != want || len(c.bad) > 0 {
			t.Errorf("receiver %d: got %d of %d messages; out of order: %.10v", r, got, want, c.bad)
		}
	}
}

func TestQoS0(t *testing.T) {
	env := startMosquitto(t, "")
	roundTrip(t, env, "qos0", pubsubkit.Params{PayloadBytes: 100, Sources: 2, SourceThreads: 1, Receivers: 2}, 2000)
}

// TestQoS1 publishes more than paho's window and mosquitto's default queue
// (1000) while the receivers keep up as they can: nothing may be lost.
func TestQoS1(t *testing.T) {
	env := startMosquitto(t, "")
	roundTrip(t, env, "qos1", pubsubkit.Params{PayloadBytes: 1000, Sources: 2, SourceThreads: 1, Receivers: 2}, 10000)
}

// TestQoS1SessionForgotten: a closed qos1 receiver's persistent session must
// not keep collecting messages on the broker.
func TestQoS1SessionForgotten(t *testing.T) {
	env := startMosquitto(t, "")
	p := pubsubkit.Params{PayloadBytes: 16, Sources: 1, SourceThreads: 1, Receivers: 1}
	rc, err := (System{}).Subscribe(context.Background(), env, "qos1", p, 0, func([]byte) {})
	if err != nil {
		t.Fatal(err)
	}
	id := rc.(*receiver).id
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	// Reconnect with that id and without clean session: the broker must say
	// there was no session (CONNACK session present = 0).
	o, _ := clientOptions(env, "qos1", id)
	c := mqtt.NewClient(o)
	tok := c.Connect()
	tok.Wait()
	if tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer c.Disconnect(0)
	if tok.(interface{ SessionPresent() bool }).SessionPresent() {
		t.Fatal("the closed receiver's session is still on the broker")
	}
}

func TestCheck(t *testing.T) {
	p := pubsubkit.Params{PayloadBytes: 1024, Sources: 1, SourceThreads: 1, Receivers: 1, BatchingBytes: 8192}
	if _, ok := (System{}).Check("qos0", p).(*pubsubkit.Unsupported); !ok {
		t.Fatal("batching_bytes > 0 accepted")
	}
	p.BatchingBytes, p.PayloadBytes = 0, 1<<20
	if err := (System{}).Check("qos1", p); err != nil {
		t.Fatal(err)
	}
	p.PayloadBytes = maxRemainingLength
	if _, ok := (System{}).Check("qos1", p).(*pubsubkit.ParamError); !ok {
		t.Fatal("a payload beyond MQTT's packet limit accepted")
	}
}

func TestUnreachable(t *testing.T) {
	env := pubsubkit.Env{ServiceURL: "mqtt://127.0.0.1:" + strconv.Itoa(freePort(t))}
	p := pubsubkit.Params{PayloadBytes: 16, Sources: 1, Receivers: 1}
	if _, err := (System{}).Connect(context.Background(), env, "qos0", p, 0); err == nil {
		t.Fatal("Connect to a closed port succeeded")
	}
}
