package mqttsys

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"msgbench/kits/pubsub"
)

// receiver is one client subscribed to every source's topic. paho calls the
// handler from its router goroutine, one message at a time in arrival order
// (OrderMatters, the default); at QoS 1 it sends the PUBACK after the
// handler returns.
type receiver struct {
	env    pubsub.Env
	client mqtt.Client
	id     string
	qos    byte

	mu      sync.Mutex // held while delivering: Close waits for a running call
	closed  bool
	dropped atomic.Int64 // connections lost
}

// Subscribe connects receiver r, subscribes to every source's topic at the
// variant's QoS and returns once the broker's SUBACK granted them all.
func (System) Subscribe(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params, r int, deliver func([]byte)) (pubsub.Receiver, error) {
	q, err := qos(opts)
	if err != nil {
		return nil, err
	}
	rc := &receiver{env: env, id: clientID("r", r), qos: q}
	o, err := clientOptions(env, q, rc.id)
	if err != nil {
		return nil, err
	}
	o.SetConnectionLostHandler(func(mqtt.Client, error) { rc.dropped.Add(1) })
	rc.client = mqtt.NewClient(o)
	if err := connect(env, rc.client); err != nil {
		return nil, err
	}
	handler := func(_ mqtt.Client, m mqtt.Message) {
		rc.mu.Lock()
		if !rc.closed {
			deliver(m.Payload())
		}
		rc.mu.Unlock()
	}
	filters := make(map[string]byte, p.Sources)
	for i := 0; i < p.Sources; i++ {
		filters[pubsub.Topic(i)] = q
	}
	t := rc.client.SubscribeMultiple(filters, handler)
	if err := rc.subscribed(t, q); err != nil {
		rc.client.Disconnect(0)
		forgetSession(env, q, rc.id)
		return nil, err
	}
	return rc, nil
}

// subscribed checks the SUBACK: every topic granted (0x80 is a refusal) at
// the QoS asked for, or delivery would be weaker than the variant says.
func (rc *receiver) subscribed(t mqtt.Token, q byte) error {
	if !t.WaitTimeout(waitLimit) {
		return fmt.Errorf("mqtt broker %s: no SUBACK within %s", rc.env.ServiceURL, waitLimit)
	}
	if err := t.Error(); err != nil {
		return fmt.Errorf("mqtt SUBSCRIBE at %s: %w", rc.env.ServiceURL, err)
	}
	for topic, granted := range t.(*mqtt.SubscribeToken).Result() {
		if granted != q {
			return fmt.Errorf("mqtt SUBSCRIBE %s at %s: granted QoS %#x, asked for %d", topic, rc.env.ServiceURL, granted, q)
		}
	}
	return nil
}

func (rc *receiver) Endpoint() string { return "" }

// Dropped is the number of times the connection to the broker was lost.
func (rc *receiver) Dropped() int64 { return rc.dropped.Load() }

// Close stops delivering, disconnects, and at qos1 discards the persistent
// session so it stops collecting messages on the broker.
func (rc *receiver) Close() error {
	rc.mu.Lock()
	rc.closed = true
	rc.mu.Unlock()
	rc.client.Disconnect(250)
	return forgetSession(rc.env, rc.qos, rc.id)
}
