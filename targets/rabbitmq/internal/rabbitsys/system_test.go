package rabbitsys

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
	"syscall"
	"testing"
	"time"

	"msgbench/pubsubkit"
)

// rabbitmqServer is Debian's script (the /usr/sbin wrapper switches user).
const rabbitmqServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// startRabbitMQ starts a RabbitMQ node the way the harness does
// (msgbench/services.py): its own epmd on a free port, its own node name,
// ports and directories, guest allowed beyond loopback; both are stopped in
// Cleanup. Skipped when rabbitmq-server is not installed. The node takes
// several seconds to boot.
func startRabbitMQ(t *testing.T) pubsubkit.Env {
	t.Helper()
	if _, err := os.Stat(rabbitmqServer); err != nil {
		t.Skip("rabbitmq-server not installed (apt-get install rabbitmq-server): skipping the test against a real broker")
	}
	if testing.Short() {
		t.Skip("-short: skipping the RabbitMQ node start (several seconds)")
	}
	dir := t.TempDir()
	port, dist, epmdPort := freePort(t), freePort(t), freePort(t)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("rabbitmq.conf", fmt.Sprintf("loopback_users.guest = false\nlisteners.tcp.default = %d\n", port))
	write("enabled_plugins", "[].\n")
	env := append(os.Environ(),
		"HOME="+dir,
		fmt.Sprintf("RABBITMQ_NODENAME=msgbenchtest%d@localhost", port),
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(port),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(dist),
		"ERL_EPMD_PORT="+strconv.Itoa(epmdPort),
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_LOGS=-",
		"RABBITMQ_CONFIG_FILE="+filepath.Join(dir, "rabbitmq"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_PID_FILE="+filepath.Join(dir, "rabbitmq.pid"),
	)
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	start := func(argv ...string) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, log, log
		// A process group of its own: Cleanup ends the node and its helpers.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	}
	// Our own epmd in the foreground: the node would otherwise daemonise one
	// that outlives the test.
	start("epmd", "-port", strconv.Itoa(epmdPort), "-address", "127.0.0.1")
	waitListening(t, epmdPort, 10*time.Second, log.Name())
	start(rabbitmqServer)
	waitListening(t, port, 90*time.Second, log.Name())
	return pubsubkit.Env{ServiceURL: fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d", port)}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening waits for a port to accept; for AMQP the broker answers
// the protocol header with a method frame only once it is ready.
func waitListening(t *testing.T, port int, limit time.Duration, logPath string) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
	}
	logText, _ := os.ReadFile(logPath)
	t.Fatalf("nothing listening on %s within %s; log:\n%s", addr, limit, logText)
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

// TestRabbitMQ starts one node for every case: a boot takes seconds.
func TestRabbitMQ(t *testing.T) {
	env := startRabbitMQ(t)
	t.Run("default", func(t *testing.T) {
		roundTrip(t, env, "default", pubsubkit.Params{PayloadBytes: 100, Sources: 2, SourceThreads: 1, Receivers: 2}, 5000)
	})
	t.Run("confirms", func(t *testing.T) {
		// More than the confirm window and the prefetch, and a large body
		// that spans several frames (frame_max 128 KiB).
		roundTrip(t, env, "confirms", pubsubkit.Params{PayloadBytes: 1000, Sources: 2, SourceThreads: 1, Receivers: 2}, 5000)
		roundTrip(t, env, "confirms", pubsubkit.Params{PayloadBytes: 300_000, Sources: 1, SourceThreads: 1, Receivers: 1}, 50)
	})
	t.Run("unreachable", func(t *testing.T) {
		bad := pubsubkit.Env{ServiceURL: "amqp://guest:guest@127.0.0.1:" + strconv.Itoa(freePort(t))}
		p := pubsubkit.Params{PayloadBytes: 16, Sources: 1, Receivers: 1}
		if _, err := (System{}).Connect(context.Background(), bad, "default", p, 0); err == nil {
			t.Fatal("Connect to a closed port succeeded")
		}
	})
}

func TestCheck(t *testing.T) {
	p := pubsubkit.Params{PayloadBytes: 1024, Sources: 1, SourceThreads: 1, Receivers: 1, BatchingBytes: 8192}
	if _, ok := (System{}).Check("default", p).(*pubsubkit.Unsupported); !ok {
		t.Fatal("batching_bytes > 0 accepted")
	}
	p.BatchingBytes = 0
	if err := (System{}).Check("confirms", p); err != nil {
		t.Fatal(err)
	}
}
