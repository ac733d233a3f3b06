package rabbitsys

import (
	"context"
	"fmt"
	"sync/atomic"

	amqp "github.com/rabbitmq/amqp091-go"

	"msgbench/kits/pubsub"
)

// Consumer settings of the "confirms" variant: the broker keeps up to
// prefetch unacknowledged messages on the wire, and the consumer acks every
// ackEvery deliveries at once (multiple = true), well before prefetch runs
// out, so the broker never waits for an ack.
const (
	prefetch = 1000
	ackEvery = prefetch / 4
)

// receiver is one connection with one consumer on its own queue, and a
// second channel on which the drain asks how many messages the queue holds.
type receiver struct {
	conn    *amqp.Connection
	consume *amqp.Channel
	query   *amqp.Channel
	queue   string
	tag     string       // the consumer's
	dropped atomic.Int64 // the connection closed by the broker or the network
	done    chan struct{}
}

var _ pubsub.Backlogger = (*receiver)(nil)

// Subscribe declares receiver r's exclusive queue, binds it with
// every source's routing key and starts consuming. Queue declaration, binding
// and basic.consume are synchronous (their -ok replies arrived), so a message
// published afterwards is routed to the queue.
func (System) Subscribe(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params, r int, deliver func([]byte)) (pubsub.Receiver, error) {
	manualAck, err := confirming(opts)
	if err != nil {
		return nil, err
	}
	conn, ch, err := dial(env)
	if err != nil {
		return nil, err
	}
	fail := func(what string, err error) (pubsub.Receiver, error) {
		conn.Close()
		return nil, fmt.Errorf("rabbitmq at %s: %s: %w", env.ServiceURL, what, err)
	}
	// Exclusive: deleted with the connection. Not auto-delete, which would
	// delete it (and what it holds) when Halt cancels the consumer.
	q, err := ch.QueueDeclare("", false, false, true, false, nil)
	if err != nil {
		return fail("queue.declare", err)
	}
	for i := 0; i < p.Sources; i++ {
		if err := ch.QueueBind(q.Name, pubsub.Topic(i), Exchange, false, nil); err != nil {
			return fail("queue.bind "+pubsub.Topic(i), err)
		}
	}
	if manualAck {
		if err := ch.Qos(prefetch, 0, false); err != nil {
			return fail("basic.qos", err)
		}
	}
	query, err := conn.Channel()
	if err != nil {
		return fail("opening a second channel", err)
	}
	tag := fmt.Sprintf("msgbench-receiver-%d", r)
	deliveries, err := ch.Consume(q.Name, tag, !manualAck, true, false, false, nil)
	if err != nil {
		return fail("basic.consume", err)
	}
	rc := &receiver{conn: conn, consume: ch, query: query, queue: q.Name, tag: tag, done: make(chan struct{})}
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		// A nil error is our own Close; anything else lost the queue (it is
		// exclusive to this connection) and what it held.
		if e, ok := <-closed; ok && e != nil {
			rc.dropped.Add(1)
		}
	}()
	go rc.loop(deliveries, manualAck, deliver)
	return rc, nil
}

// loop delivers until the channel closes; with manual acks it acks every
// ackEvery deliveries at once.
func (rc *receiver) loop(deliveries <-chan amqp.Delivery, manualAck bool, deliver func([]byte)) {
	defer close(rc.done)
	n := 0
	for d := range deliveries {
		deliver(d.Body)
		if manualAck {
			if n++; n == ackEvery {
				n = 0
				// An error here means the channel is closing; the range
				// ends with it.
				_ = d.Ack(true)
			}
		}
	}
}

func (rc *receiver) Endpoint() string { return "" }

// Dropped is the number of times the connection was closed under us.
func (rc *receiver) Dropped() int64 { return rc.dropped.Load() }

// Backlog is the queue's count of messages ready for delivery (a passive
// queue.declare; the queue is exclusive to this connection, so asked on it):
// what RabbitMQ still holds that it has not sent. Deliveries already sent
// (auto-ack) or awaiting their ack are not in it.
func (rc *receiver) Backlog() (int64, error) {
	q, err := rc.query.QueueDeclarePassive(rc.queue, false, false, true, false, nil)
	if err != nil {
		return 0, fmt.Errorf("passive queue.declare %s: %w", rc.queue, err)
	}
	return int64(q.Messages), nil
}

// Halt cancels the consumer (basic.cancel, waiting for cancel-ok) and waits
// until the delivery loop has handed on everything amqp091-go buffered:
// afterwards the queue's count is what never left it. With consumer acks
// ("confirms") that is exact: what was sent and not acked stays out of the
// count and was received. With auto-ack, deliveries the broker's channel had
// already taken from the queue when the cancel reached it are written after
// cancel-ok, and amqp091-go drops deliveries for a cancelled consumer
// silently: those count as lost. The count errs only that way: it never
// calls a lost message undelivered.
func (rc *receiver) Halt() error {
	if err := rc.consume.Cancel(rc.tag, false); err != nil {
		return fmt.Errorf("basic.cancel %s: %w", rc.tag, err)
	}
	<-rc.done
	return nil
}

// Close closes the connection, which deletes the queue, and waits for the
// delivery loop to end.
func (rc *receiver) Close() error {
	err := rc.conn.Close()
	<-rc.done
	return err
}
