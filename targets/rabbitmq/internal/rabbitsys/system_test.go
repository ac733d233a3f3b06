package rabbitsys

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// rabbitmqServer is Debian's script (the /usr/sbin wrapper switches user).
const rabbitmqServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// startRabbitMQ starts a RabbitMQ node the way the harness does
// (msgbench/catalogue.py): its own epmd on a free port, its own node name,
// ports and directories, guest allowed beyond loopback; both are stopped in
// Cleanup. Skipped when rabbitmq-server is not installed. The node takes
// several seconds to boot. It returns the node's process group too, for
// the tests that stall it.
func startRabbitMQ(t *testing.T) (pubsub.Env, int) {
	t.Helper()
	server := kittest.Binary(t, "apt-get install rabbitmq-server", rabbitmqServer)
	if testing.Short() {
		t.Skip("-short: skipping the RabbitMQ node start (several seconds)")
	}
	dir := t.TempDir()
	ports := kittest.FreePorts(t, 3)
	port, dist, epmdPort := ports[0], ports[1], ports[2]
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
	start := func(argv ...string) int {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, log, log
		kittest.Start(t, cmd)  // ends the node and its helpers in Cleanup
		return cmd.Process.Pid // the group's: kittest.Start gives it one of its own
	}
	// Our own epmd in the foreground: the node would otherwise daemonise one
	// that outlives the test.
	start("epmd", "-port", strconv.Itoa(epmdPort), "-address", "127.0.0.1")
	kittest.WaitListening(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(epmdPort)), 10*time.Second, log.Name())
	node := start(server)
	kittest.WaitListening(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 90*time.Second, log.Name())
	return pubsub.Env{ServiceURL: fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d", port)}, node
}

// roundTrip subscribes receivers, publishes perSource messages from every
// source, and checks every receiver got all of them in order.
func roundTrip(t *testing.T, env pubsub.Env, opts pubsub.Options, p pubsub.Params, perSource int) {
	kittest.RoundTrip{System: System{}, Env: env, Options: opts, Params: p, PerSource: perSource}.Run(t)
}

// The options of target.toml's variants.
var (
	plain    = pubsub.Options{}
	confirms = pubsub.Options{"confirms": true}
)

// TestRabbitMQ starts one node for every case: a boot takes seconds.
func TestRabbitMQ(t *testing.T) {
	env, node := startRabbitMQ(t)
	t.Run("default", func(t *testing.T) {
		roundTrip(t, env, plain, pubsub.Params{PayloadBytes: 100, Sources: 2, SourceThreads: 1, Receivers: 2}, 5000)
	})
	t.Run("confirms", func(t *testing.T) {
		// More than the confirm window and the prefetch, and a large body
		// that spans several frames (frame_max 128 KiB).
		roundTrip(t, env, confirms, pubsub.Params{PayloadBytes: 1000, Sources: 2, SourceThreads: 1, Receivers: 2}, 5000)
		roundTrip(t, env, confirms, pubsub.Params{PayloadBytes: 300_000, Sources: 1, SourceThreads: 1, Receivers: 1}, 50)
	})
	t.Run("backlog", func(t *testing.T) {
		for _, opts := range []pubsub.Options{plain, confirms} {
			backlogCounted(t, env, opts)
		}
	})
	t.Run("flush waits for a stopped broker", func(t *testing.T) {
		flushWaitsForAStoppedBroker(t, env, node)
	})
	t.Run("stalled broker", func(t *testing.T) {
		stalledBroker(t, env, node)
	})
	t.Run("unreachable", func(t *testing.T) {
		bad := pubsub.Env{ServiceURL: "amqp://guest:guest@127.0.0.1:" + strconv.Itoa(kittest.FreePort(t))}
		p := pubsub.Params{PayloadBytes: 16, Sources: 1, Receivers: 1}
		if _, err := (System{}).Connect(context.Background(), bad, plain, p, 0); err == nil {
			t.Fatal("Connect to a closed port succeeded")
		}
	})
}

func TestCheck(t *testing.T) {
	kittest.NoBatching(t, System{}, plain, confirms)
	kittest.RefusesUnknownOptions(t, System{})
}
