// Package zmqsys is msgbench's pubsub System for ZeroMQ (libzmq 4.3 through
// the cgo binding github.com/pebbe/zmq4), brokerless: each receiver is a SUB
// socket bound to a loopback port, each source an XPUB socket connected to
// every receiver. A message is two frames: the topic (msgbench.<i>, which SUB
// filters on) and the payload.
package zmqsys

import (
	"fmt"

	zmq "github.com/pebbe/zmq4"

	"msgbench/kits/pubsub"
)

// System implements pubsub.System for ZeroMQ. Its one option, "no_drop":
// false (target.toml's default: HWM 1000, the publisher drops for a receiver
// whose queue is full) or true (ZMQ_XPUB_NODROP: the publisher blocks instead).
type System struct{}

var _ pubsub.System = System{}

func noDrop(opts pubsub.Options) (bool, error) {
	if err := opts.Unknown("no_drop"); err != nil {
		return false, err
	}
	return opts.Bool("no_drop")
}

// Check accepts batching_bytes = 0 only. libzmq's I/O thread always writes
// what is queued for a connection in one go (up to 8 KiB per write) but
// never waits for more: there is no batching to turn off, as with plain TCP
// and TCP_NODELAY. There is no knob to make it wait for N bytes.
//
// Lossless (target.toml) with no_drop: the publisher blocks when a receiver's
// queues are full (SNDHWM on the XPUB, RCVHWM on the SUB, TCP in between), so
// nothing is dropped while the connections stay up; without it libzmq drops
// silently at the HWM.
func (System) Check(opts pubsub.Options, p pubsub.Params) error {
	if _, err := noDrop(opts); err != nil {
		return err
	}
	if p.BatchingBytes > 0 {
		return &pubsub.Unsupported{Message: fmt.Sprintf("batching_bytes = %d: libzmq writes whatever is queued as soon as the socket can take it and has no setting to hold messages back until N bytes accumulate; only batching_bytes = 0 is supported", p.BatchingBytes)}
	}
	return nil
}

// hwm is the high-water mark (in messages) of both ends. "default" keeps
// libzmq's 1000. "no_drop" queues more so a short stall of the receiver
// does not stop the publisher at once, bounded to about 64 MiB per queue.
func hwm(noDrop bool, payloadBytes int) int {
	if !noDrop {
		return 1000
	}
	return min(max((64<<20)/payloadBytes, 1000), 100_000)
}

// Library is the libzmq the binding runs against (pebbe/zmq4 is pinned in
// go.mod; libzmq comes from Debian's libzmq5).
func Library() string {
	major, minor, patch := zmq.Version()
	return fmt.Sprintf("libzmq %d.%d.%d", major, minor, patch)
}
