// Package mqttsys is msgbench's pubsub System for MQTT 3.1.1 through
// github.com/eclipse/paho.mqtt.golang, against mosquitto: each source and each
// receiver is its own client connection.
package mqttsys

import (
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"msgbench/kits/pubsub"
)

// maxRemainingLength is MQTT's largest packet body (the 4-byte variable-length
// "remaining length"): a PUBLISH holds the topic (2-byte length + name), the
// packet identifier at QoS 1 (2 bytes), and the payload.
const maxRemainingLength = 268_435_455

// waitLimit bounds every wait on the broker (CONNACK, SUBACK, the last PUBACK).
const waitLimit = 30 * time.Second

// System implements pubsub.System for MQTT. Its one option is "qos": 0
// (at most once) or 1 (at least once, persistent sessions); target.toml's
// variants qos0 and qos1 set it.
type System struct{}

var _ pubsub.System = System{}

// qos is the variant's MQTT QoS level.
func qos(opts pubsub.Options) (byte, error) {
	if err := opts.Unknown("qos"); err != nil {
		return 0, err
	}
	q, err := opts.Int("qos", 0)
	if err != nil {
		return 0, err
	}
	if q != 0 && q != 1 {
		return 0, &pubsub.Unsupported{Message: fmt.Sprintf("qos = %d: msgbench's mqtt runs QoS 0 and 1", q)}
	}
	return byte(q), nil
}

// Check refuses batching (paho writes each PUBLISH packet with its own write
// and has no knob to gather them) and payloads beyond MQTT's packet limit
// (mosquitto's max_packet_size and message_size_limit default to no limit
// below it).
//
// Lossless (target.toml): qos1 delivers every message as long as the broker
// queues instead of dropping (mosquitto: max_queued_messages 0 and
// max_queued_bytes 0, i.e. no per-client queue limit; the harness's
// mosquitto.conf sets them), and persistent sessions carry in-flight messages
// over a reconnect. qos0 is at most once: mosquitto may drop QoS 0 messages
// for a slow client, and a lost connection loses what was in it.
func (System) Check(opts pubsub.Options, p pubsub.Params) error {
	q, err := qos(opts)
	if err != nil {
		return err
	}
	if p.BatchingBytes > 0 {
		return &pubsub.Unsupported{Message: fmt.Sprintf("batching_bytes = %d: paho.mqtt.golang writes every PUBLISH packet on its own (one write per message) and has no batching to turn on; only batching_bytes = 0 is supported", p.BatchingBytes)}
	}
	overhead := 2 + len(pubsub.Topic(p.Sources-1))
	if q > 0 {
		overhead += 2
	}
	if limit := maxRemainingLength - overhead; p.PayloadBytes > limit {
		return &pubsub.Unsupported{Message: fmt.Sprintf("payload_bytes = %d: an MQTT PUBLISH carries at most %d payload bytes here", p.PayloadBytes, limit)}
	}
	return nil
}

// broker turns the service URL (mqtt://127.0.0.1:1883) into paho's form
// (tcp://127.0.0.1:1883).
func broker(env pubsub.Env) (string, error) {
	if env.ServiceURL == "" {
		return "", fmt.Errorf("mqtt: no service URL (MSGBENCH_SERVICE_URL)")
	}
	u, err := url.Parse(env.ServiceURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("mqtt: service URL %q is not mqtt://host:port", env.ServiceURL)
	}
	switch u.Scheme {
	case "mqtt", "tcp":
		return "tcp://" + u.Host, nil
	}
	return "", fmt.Errorf("mqtt: service URL %q: scheme %q is not mqtt", env.ServiceURL, u.Scheme)
}

var clientSeq atomic.Int64

// clientID is unique per client, process and moment: a persistent (qos1)
// session must never be picked up by another run on the same broker.
func clientID(role string, index int) string {
	return fmt.Sprintf("msgbench-%s%d-%d-%d-%x", role, index, os.Getpid(), clientSeq.Add(1), time.Now().UnixNano()&0xffffff)
}

// clientOptions are what sources and receivers share. QoS 1 uses a persistent
// session (clean session false): on a reconnect the broker resends what the
// client had not acknowledged and paho resends its unacknowledged PUBLISHes.
func clientOptions(env pubsub.Env, q byte, id string) (*mqtt.ClientOptions, error) {
	b, err := broker(env)
	if err != nil {
		return nil, err
	}
	o := mqtt.NewClientOptions().
		AddBroker(b).
		SetClientID(id).
		SetProtocolVersion(4). // MQTT 3.1.1, no fallback to 3.1
		SetCleanSession(q != 1).
		SetConnectTimeout(10 * time.Second).
		SetAutoReconnect(true).
		SetConnectRetry(false)
	return o, nil
}

// connect connects c and waits for the CONNACK.
func connect(env pubsub.Env, c mqtt.Client) error {
	t := c.Connect()
	if !t.WaitTimeout(waitLimit) {
		return fmt.Errorf("mqtt broker %s: no CONNACK within %s", env.ServiceURL, waitLimit)
	}
	if err := t.Error(); err != nil {
		return fmt.Errorf("mqtt broker %s unreachable: %w", env.ServiceURL, err)
	}
	return nil
}

// forgetSession discards a persistent session on the broker: connecting with
// clean session set ends the old one (MQTT 3.1.1, 3.1.2.4), so a finished
// receiver's subscriptions stop collecting messages for the rest of the run.
func forgetSession(env pubsub.Env, q byte, id string) error {
	if q != 1 {
		return nil
	}
	o, err := clientOptions(env, q, id)
	if err != nil {
		return err
	}
	c := mqtt.NewClient(o.SetCleanSession(true).SetAutoReconnect(false))
	if err := connect(env, c); err != nil {
		return err
	}
	c.Disconnect(0)
	return nil
}
