package kafkasys

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// startBroker runs the broker `make build` fetched (bin/kafka-broker, one
// KRaft node) in the test's temporary folder on free loopback ports; the
// test skips when it is not built.
func startBroker(t *testing.T) (url string, stop func()) {
	t.Helper()
	bin, _ := filepath.Abs("../../bin/kafka-broker")
	bin = kittest.Binary(t, "make -C targets/kafka build", bin)
	dir := t.TempDir()
	ports := kittest.FreePorts(t, 2)
	port, controller := ports[0], ports[1]
	config := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[2]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=%[3]s/data
auto.create.topics.enable=false
message.max.bytes=8388608
`, port, controller, dir)
	if err := os.WriteFile(filepath.Join(dir, "server.properties"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "server.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		log.Close()
		if text, _ := os.ReadFile(logPath); t.Failed() {
			t.Logf("broker log:\n%s", text)
		}
	})
	cmd := exec.Command(bin, filepath.Join(dir, "server.properties"))
	cmd.Env = append(os.Environ(), "KAFKA_HEAP_OPTS=-Xmx512m")
	cmd.Stdout, cmd.Stderr = log, log
	stop = kittest.Start(t, cmd)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	kittest.WaitListening(t, addr, 180*time.Second, logPath)
	return "kafka://" + addr, stop
}

// Against one broker (a JVM start is seconds, so one for every case): both
// variants deliver every message of every source to every receiver, whole and
// in order, batched or not; a second measurement on the same topic starts at
// its end; a stalled receiver's lag is what the broker holds for it (drain_test.go);
// a broker that dies fails the source with an error naming it.
func TestAgainstABroker(t *testing.T) {
	url, stop := startBroker(t)
	env := pubsub.Env{ServiceURL: url}
	for _, opts := range []pubsub.Options{{}, {"acks": -1}} {
		for _, batching := range []int{0, 8192} {
			t.Run(fmt.Sprintf("%v batching %d", opts, batching), func(t *testing.T) {
				p := pubsub.Params{PayloadBytes: 200, Sources: 2, Receivers: 2, BatchingBytes: batching}
				kittest.RoundTrip{System: System{}, Env: env, Options: opts, Params: p,
					PerSource: 2000, Wait: 30 * time.Second}.Run(t)
			})
		}
	}
	t.Run("backlog counted", func(t *testing.T) { backlogCounted(t, env) })
	t.Run("a large payload", func(t *testing.T) {
		p := pubsub.Params{PayloadBytes: 1 << 20, Sources: 1, Receivers: 1}
		kittest.RoundTrip{System: System{}, Env: env, Params: p, PerSource: 5, Wait: 30 * time.Second}.Run(t)
	})
	t.Run("the broker gone", func(t *testing.T) {
		p := pubsub.Params{PayloadBytes: 64, Sources: 1, Receivers: 1}
		src, err := System{}.Connect(context.Background(), env, pubsub.Options{}, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		// The client retries a dead broker until the flush's limit: 60 s of a test
		// that checks only that the error names the broker.
		defer func(was time.Duration) { flushWithin = was }(flushWithin)
		flushWithin = 3 * time.Second
		stop()
		for seq := 1; seq < 10 && err == nil; seq++ {
			if err = src.Publish(pubsub.EncodeMessage(64, 0, uint32(seq), 0)); err == nil {
				err = src.Flush()
			}
		}
		if err == nil || !strings.Contains(err.Error(), url) {
			t.Fatalf("publishing to a dead broker: %v", err)
		}
	})
}

func TestOptions(t *testing.T) {
	p := pubsub.Params{PayloadBytes: 16, Sources: 1, Receivers: 1}
	for _, opts := range []pubsub.Options{{"acks": 0}, {"acks": "all"}} {
		if err := (System{}).Check(opts, p); err == nil || !strings.Contains(err.Error(), "acks") {
			t.Fatalf("%v: %v", opts, err)
		}
	}
	if err := (System{}).Check(pubsub.Options{"linger": 5}, p); err == nil || !strings.Contains(err.Error(), "linger") {
		t.Fatalf("unknown option: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	_, err := System{}.Connect(context.Background(), pubsub.Env{ServiceURL: "kafka://127.0.0.1:1"}, pubsub.Options{},
		pubsub.Params{PayloadBytes: 16, Sources: 1}, 0)
	if err == nil || !strings.Contains(err.Error(), "kafka://127.0.0.1:1") {
		t.Fatalf("got %v", err)
	}
}
