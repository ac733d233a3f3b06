package pubsub

import (
	"time"

	"msgbench/kits/go/peer"
)

// who names the peer in the worker's errors ("the receivers: ...").
const who = "the receivers"

const (
	listeningWithin = 30 * time.Second
	// explainWithin is how long a worker that lost its connection waits for
	// the peer's own error line, which says more than a reset does.
	explainWithin = 2 * time.Second
)

// peerHandle is the worker's end of the peer: a *peer.Process, or in the
// tests a peer in the same process (inproc_test.go).
type peerHandle interface {
	// Send writes one line to the peer's stdin.
	Send(line []byte) error
	// Next waits up to limit for the peer's next line, which must be of
	// type want; the peer's error line is returned as an error.
	Next(want string, limit time.Duration) (peer.Line, error)
	// Explanation is the peer's error line if one arrives within limit.
	Explanation(limit time.Duration) error
	// Stop closes the peer's stdin and makes sure it has ended
	// (peer.Process: waits peer.ExitWithin, then kills its process group).
	Stop()
}

// peerStarter starts the peer and writes request (one line) to its stdin.
type peerStarter func(request []byte) (peerHandle, error)

// startProcessPeer starts argv in cwd as the peer (peer.Start).
func startProcessPeer(argv []string, cwd string) peerStarter {
	return func(request []byte) (peerHandle, error) {
		p, err := peer.Start(who, argv, cwd, request)
		if err != nil {
			return nil, err // not a nil *peer.Process in a non-nil interface
		}
		return p, nil
	}
}
