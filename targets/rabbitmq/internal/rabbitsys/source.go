package rabbitsys

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"msgbench/kits/pubsub"
)

// confirmWindow is how many publishes a "confirms" source has unconfirmed
// before it waits for the oldest confirmation.
const confirmWindow = 1024

// confirmLimit bounds the wait for one confirmation.
const confirmLimit = 30 * time.Second

// source publishes transient messages with routing key msgbench.<i> on its own
// connection and channel. amqp091-go writes the frames of one basic.publish
// and flushes them before Publish returns, so msg can be reused at once.
type source struct {
	env   pubsub.Env
	conn  *amqp.Connection
	ch    *amqp.Channel
	topic string

	confirms    chan amqp.Confirmation // nil without confirms
	outstanding int
}

// Connect opens source i's connection and channel; with confirms it puts the
// channel in confirm mode.
func (System) Connect(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params, i int) (pubsub.Source, error) {
	confirm, err := confirming(opts)
	if err != nil {
		return nil, err
	}
	conn, ch, err := dial(env)
	if err != nil {
		return nil, err
	}
	s := &source{env: env, conn: conn, ch: ch, topic: pubsub.Topic(i)}
	if confirm {
		if err := ch.Confirm(false); err != nil {
			conn.Close()
			return nil, fmt.Errorf("rabbitmq at %s: confirm.select: %w", env.ServiceURL, err)
		}
		// The capacity covers every outstanding confirmation (the library
		// blocks its reader otherwise, amqp091-go's NotifyPublish).
		s.confirms = ch.NotifyPublish(make(chan amqp.Confirmation, confirmWindow))
	}
	return s, nil
}

func (s *source) Publish(msg []byte) error {
	if s.confirms != nil && s.outstanding == confirmWindow {
		if err := s.waitConfirm(); err != nil {
			return err
		}
	}
	if err := s.ch.Publish(Exchange, s.topic, false, false, amqp.Publishing{Body: msg}); err != nil {
		return fmt.Errorf("rabbitmq at %s: basic.publish %s: %w", s.env.ServiceURL, s.topic, err)
	}
	if s.confirms != nil {
		s.outstanding++
	}
	return nil
}

// waitConfirm takes the oldest confirmation (the library hands them over in
// publishing order, one per message even when the broker acks several).
// With the window full this runs once per Publish: a confirmation already
// there is taken without starting a timer.
func (s *source) waitConfirm() error {
	var c amqp.Confirmation
	var ok bool
	select {
	case c, ok = <-s.confirms:
	default:
		t := time.NewTimer(confirmLimit)
		select {
		case c, ok = <-s.confirms:
			t.Stop()
		case <-t.C:
			return fmt.Errorf("rabbitmq at %s: no publisher confirm within %s", s.env.ServiceURL, confirmLimit)
		}
	}
	if !ok {
		return fmt.Errorf("rabbitmq at %s: channel closed with %d publishes unconfirmed", s.env.ServiceURL, s.outstanding)
	}
	s.outstanding--
	if !c.Ack {
		return fmt.Errorf("rabbitmq at %s: the broker nacked publish %d on %s", s.env.ServiceURL, c.DeliveryTag, s.topic)
	}
	return nil
}

// Flush waits until the broker has every message published: with confirms,
// for every outstanding confirmation. Without them a publish is only written
// to the socket, and a broker starved of CPU reads its socket late: its queues
// then hold nothing yet for the receivers, whose drain (which starts after
// Flush) would end and count the messages still in the socket as lost. So
// Flush makes a synchronous call on the same channel (exchange.declare, which
// changes nothing): the broker's channel takes its frames in order, so its
// answer comes once every publish before it has been routed to the queues.
func (s *source) Flush() error {
	if s.confirms == nil {
		return declareExchange(s.env, s.ch)
	}
	for s.outstanding > 0 {
		if err := s.waitConfirm(); err != nil {
			return err
		}
	}
	return nil
}

func (s *source) Close() error {
	return s.conn.Close()
}
