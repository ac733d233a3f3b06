// Package rabbitsys is msgbench's pubsub System for RabbitMQ (AMQP 0-9-1)
// through github.com/rabbitmq/amqp091-go. Topology: one direct exchange
// "msgbench"; source i publishes with routing key msgbench.<i>; each receiver
// has an exclusive, server-named queue bound with every source's
// key, and one consumer on it.
package rabbitsys

import (
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"msgbench/kits/pubsub"
)

// Exchange is the one exchange every source publishes to.
const Exchange = "msgbench"

// maxMessageBytes is RabbitMQ 3.10's default max_message_size (128 MiB).
const maxMessageBytes = 128 << 20

// System implements pubsub.System for RabbitMQ. Its one option,
// "confirms": false (target.toml's default: no publisher confirms, auto-ack
// consumers) or true (the confirms variant: publisher confirms and consumer
// acks).
type System struct{}

var _ pubsub.System = System{}

func confirming(opts pubsub.Options) (bool, error) {
	if err := opts.Unknown("confirms"); err != nil {
		return false, err
	}
	return opts.Bool("confirms")
}

// Check refuses batching: amqp091-go writes each basic.publish (method,
// header and body frames) and flushes it before Publish returns, and has no
// knob to gather several messages into one write.
//
// Lossless (target.toml) for both variants while the connections stay up:
// RabbitMQ never drops a routed message from a queue without a length limit
// (ours have none); a publisher that outruns the queues is slowed by credit
// flow control (and blocked by a memory alarm), not dropped. Without confirms
// a connection or broker failure loses what was in flight without a word, and
// auto-ack consumers hold what the broker pushed in client memory; with them
// every message reached the queues before Flush returns.
func (System) Check(opts pubsub.Options, p pubsub.Params) error {
	if _, err := confirming(opts); err != nil {
		return err
	}
	if p.BatchingBytes > 0 {
		return &pubsub.Unsupported{Message: fmt.Sprintf("batching_bytes = %d: amqp091-go flushes every basic.publish on its own (one write per message) and has no batching to turn on; only batching_bytes = 0 is supported", p.BatchingBytes)}
	}
	if p.PayloadBytes > maxMessageBytes {
		return &pubsub.Unsupported{Message: fmt.Sprintf("payload_bytes = %d: beyond RabbitMQ's default max_message_size (%d)", p.PayloadBytes, maxMessageBytes)}
	}
	return nil
}

// dial opens one AMQP connection and a channel on it.
func dial(env pubsub.Env) (*amqp.Connection, *amqp.Channel, error) {
	if env.ServiceURL == "" {
		return nil, nil, fmt.Errorf("rabbitmq: no service URL (MSGBENCH_SERVICE_URL)")
	}
	conn, err := amqp.Dial(env.ServiceURL)
	if err != nil {
		return nil, nil, fmt.Errorf("rabbitmq at %s unreachable: %w", env.ServiceURL, err)
	}
	ch, err := conn.Channel()
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("rabbitmq at %s: opening a channel: %w", env.ServiceURL, err)
	}
	// Sources and receivers both declare it (idempotent), so either may come first.
	if err := declareExchange(env, ch); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, ch, nil
}

// declareExchange declares the exchange on ch, and returns once the broker has
// answered: a synchronous method (exchange.declare-ok).
func declareExchange(env pubsub.Env, ch *amqp.Channel) error {
	if err := ch.ExchangeDeclare(Exchange, amqp.ExchangeDirect, false, false, false, false, nil); err != nil {
		return fmt.Errorf("rabbitmq at %s: declaring exchange %s: %w", env.ServiceURL, Exchange, err)
	}
	return nil
}
