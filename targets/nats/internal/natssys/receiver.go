package natssys

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"msgbench/kits/pubsub"
)

// Pending limits of a receiver's subscription: nats.go queues what its read
// loop has taken off the socket until the handler runs, and drops (counting
// it in Dropped) beyond these limits. The defaults (512 Ki messages, 64 MiB)
// are raised so that a burst is queued rather than dropped, but kept finite:
// a receiver that cannot keep up loses messages, as NATS core does, and the
// loss is reported.
const (
	pendingMsgs  = 8 << 20
	pendingBytes = 1 << 30
)

// receiver is one connection with one async subscription to msgbench.*:
// one subscription, so nats.go calls the handler from one goroutine, in the
// order the server sent the messages (the order of each source's publishes).
// An async handler rather than SubscribeSync + NextMsg: the async path hands
// messages over through a list and a condition variable, the sync one through
// a channel per message.
type receiver struct {
	nc  *nats.Conn
	sub *nats.Subscription

	mu      sync.Mutex // held during deliver, so Close can wait it out
	closed  bool
	deliver func([]byte)
}

func subscribe(ctx context.Context, env pubsub.Env, index int, deliver func([]byte)) (*receiver, error) {
	nc, err := connect(ctx, env, fmt.Sprintf("msgbench-receiver-%d", index))
	if err != nil {
		return nil, err
	}
	r := &receiver{nc: nc, deliver: deliver}
	r.sub, err = nc.Subscribe("msgbench.*", r.handle)
	if err == nil {
		err = r.sub.SetPendingLimits(pendingMsgs, pendingBytes)
	}
	if err == nil {
		// A round trip: the server has the subscription once it answers,
		// so messages published from now on reach this receiver.
		err = nc.FlushWithContext(ctx)
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("subscribe to msgbench.* at %s: %w", env.ServiceURL, err)
	}
	return r, nil
}

func (r *receiver) handle(m *nats.Msg) {
	r.mu.Lock()
	if !r.closed {
		r.deliver(m.Data)
	}
	r.mu.Unlock()
}

func (r *receiver) Endpoint() string { return "" }

// Dropped is what nats.go dropped from this subscription's pending queue
// (slow consumer). A server-side slow-consumer disconnect shows as loss.
func (r *receiver) Dropped() int64 {
	n, err := r.sub.Dropped()
	if err != nil {
		return 0
	}
	return int64(n)
}

// Close waits for a running handler, then closes the connection: deliver is
// never called after it returns.
func (r *receiver) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.nc.Close()
	return nil
}
