package mqttsys

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"msgbench/kits/pubsub"
	"msgbench/kits/pubsub/kittest"
)

// mosquittoConf is msgbench/catalogue.py's MOSQUITTO_CONF ({port} -> %d), which
// tests/test_target_files.py keeps equal: no per-client queue limit, which the
// qos1 variant's lossless claim needs. `user root` has no effect unless
// mosquitto starts as root, where it keeps the parent-death signal.
const mosquittoConf = `listener %d 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 0
max_queued_bytes 0
max_inflight_messages 0
message_size_limit 0
user root
log_dest stderr
log_type error
log_type warning
log_type notice
`

// startMosquitto starts mosquitto on a free loopback port as the harness
// does, stops it in Cleanup, and skips the test when it is not installed.
func startMosquitto(t *testing.T) pubsub.Env {
	t.Helper()
	bin := kittest.Binary(t, "apt-get install mosquitto", "mosquitto", "/usr/sbin/mosquitto")
	srv := kittest.StartServer(t, bin, func(port int) []string {
		conf := filepath.Join(t.TempDir(), "mosquitto.conf")
		if err := os.WriteFile(conf, []byte(fmt.Sprintf(mosquittoConf, port)), 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{"-c", conf}
	})
	return pubsub.Env{ServiceURL: "mqtt://" + srv.Addr}
}

// roundTrip subscribes receivers, publishes perSource messages from every
// source, and checks every receiver got all of them in order.
func roundTrip(t *testing.T, env pubsub.Env, opts pubsub.Options, p pubsub.Params, perSource int) {
	kittest.RoundTrip{System: System{}, Env: env, Options: opts, Params: p, PerSource: perSource}.Run(t)
}

// The options of target.toml's variants.
var (
	qos0 = pubsub.Options{"qos": 0}
	qos1 = pubsub.Options{"qos": 1}
)

func TestQoS0(t *testing.T) {
	env := startMosquitto(t)
	roundTrip(t, env, qos0, pubsub.Params{PayloadBytes: 100, Sources: 2, SourceThreads: 1, Receivers: 2}, 2000)
}

// TestQoS1 publishes more than paho's window and mosquitto's default queue
// (1000) while the receivers keep up as they can: nothing may be lost.
func TestQoS1(t *testing.T) {
	env := startMosquitto(t)
	roundTrip(t, env, qos1, pubsub.Params{PayloadBytes: 1000, Sources: 2, SourceThreads: 1, Receivers: 2}, 10000)
}

// TestQoS1SessionForgotten: a closed qos1 receiver's persistent session must
// not keep collecting messages on the broker.
func TestQoS1SessionForgotten(t *testing.T) {
	env := startMosquitto(t)
	p := pubsub.Params{PayloadBytes: 16, Sources: 1, SourceThreads: 1, Receivers: 1}
	rc, err := (System{}).Subscribe(context.Background(), env, qos1, p, 0, func([]byte) {})
	if err != nil {
		t.Fatal(err)
	}
	id := rc.(*receiver).id
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	// Reconnect with that id and without clean session: the broker must say
	// there was no session (CONNACK session present = 0).
	o, _ := clientOptions(env, 1, id)
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
	kittest.NoBatching(t, System{}, qos0, qos1)
	kittest.RefusesUnknownOptions(t, System{})
	p := pubsub.Params{PayloadBytes: 1 << 20, Sources: 1, SourceThreads: 1, Receivers: 1}
	if err := (System{}).Check(qos1, p); err != nil {
		t.Fatal(err)
	}
	p.PayloadBytes = maxRemainingLength
	if _, ok := (System{}).Check(qos1, p).(*pubsub.Unsupported); !ok {
		t.Fatal("a payload beyond MQTT's packet limit accepted")
	}
}

func TestUnreachable(t *testing.T) {
	env := pubsub.Env{ServiceURL: "mqtt://127.0.0.1:" + strconv.Itoa(kittest.FreePort(t))}
	p := pubsub.Params{PayloadBytes: 16, Sources: 1, Receivers: 1}
	if _, err := (System{}).Connect(context.Background(), env, qos0, p, 0); err == nil {
		t.Fatal("Connect to a closed port succeeded")
	}
}
