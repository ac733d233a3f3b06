package zmqsys

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"msgbench/kits/pubsub"
)

// pollEvery is how often a receiver blocked in recv looks at its stop flag.
const pollEvery = 100 * time.Millisecond

// receiver is one SUB socket bound to env.ListenAddress() (127.0.0.1, or this
// host's address when the sources run on another host) on a port of the
// kernel's choosing, subscribed to every source's topic.
type receiver struct {
	endpoint string
	stop     atomic.Bool
	done     chan struct{}
}

// Subscribe binds receiver r's SUB socket and sets its subscriptions. A SUB
// sends its subscriptions to every publisher that connects, and the source's
// Connect waits until they arrived, so there is nothing more to wait for here.
func (System) Subscribe(ctx context.Context, env pubsub.Env, opts pubsub.Options, p pubsub.Params, r int, deliver func([]byte)) (pubsub.Receiver, error) {
	nd, err := noDrop(opts)
	if err != nil {
		return nil, err
	}
	sock, err := zmq.NewSocket(zmq.SUB)
	if err != nil {
		return nil, fmt.Errorf("zeromq: SUB socket: %w", err)
	}
	endpoint, err := setUpSub(sock, env.ListenAddress(), hwm(nd, p.PayloadBytes), p.Sources)
	if err != nil {
		sock.Close()
		return nil, err
	}
	rc := &receiver{endpoint: endpoint, done: make(chan struct{})}
	go rc.loop(sock, deliver)
	return rc, nil
}

func setUpSub(sock *zmq.Socket, host string, hwm, sources int) (string, error) {
	if err := sock.SetRcvhwm(hwm); err != nil {
		return "", fmt.Errorf("zeromq: ZMQ_RCVHWM: %w", err)
	}
	if err := sock.SetRcvtimeo(pollEvery); err != nil {
		return "", fmt.Errorf("zeromq: ZMQ_RCVTIMEO: %w", err)
	}
	if err := sock.SetLinger(0); err != nil {
		return "", fmt.Errorf("zeromq: ZMQ_LINGER: %w", err)
	}
	for i := 0; i < sources; i++ {
		if err := sock.SetSubscribe(pubsub.Topic(i)); err != nil {
			return "", fmt.Errorf("zeromq: ZMQ_SUBSCRIBE %s: %w", pubsub.Topic(i), err)
		}
	}
	if err := sock.Bind("tcp://" + host + ":*"); err != nil {
		return "", fmt.Errorf("zeromq: bind tcp://%s:*: %w", host, err)
	}
	endpoint, err := sock.GetLastEndpoint()
	if err != nil {
		return "", fmt.Errorf("zeromq: ZMQ_LAST_ENDPOINT: %w", err)
	}
	return endpoint, nil
}

// loop owns the socket (a ZeroMQ socket is used from one thread at a time):
// it receives, delivers, and closes the socket when told to stop.
func (rc *receiver) loop(sock *zmq.Socket, deliver func([]byte)) {
	runtime.LockOSThread()
	defer close(rc.done)
	defer sock.Close()
	for !rc.stop.Load() {
		// The topic frame: the SUB has already filtered on it.
		if _, err := sock.RecvBytes(0); err != nil {
			if zmq.AsErrno(err) == zmq.Errno(syscall.EAGAIN) { // RCVTIMEO passed
				continue
			}
			return
		}
		// The rest of a multipart message is delivered atomically with its
		// first frame: this does not wait.
		msg, err := sock.RecvBytes(0)
		if err != nil {
			return
		}
		deliver(msg)
	}
}

// Endpoint is the bound address, e.g. tcp://127.0.0.1:40123.
func (rc *receiver) Endpoint() string { return rc.endpoint }

// Dropped is 0: a ZeroMQ publisher drops without telling anyone; what was
// dropped shows as sequence gaps (loss).
func (rc *receiver) Dropped() int64 { return 0 }

// Close stops the loop (within pollEvery) and waits until it closed the socket.
func (rc *receiver) Close() error {
	rc.stop.Store(true)
	<-rc.done
	return nil
}
