package pubsub

import (
	"errors"

	"msgbench/kits/go/protocol"
)

// classify is protocol.Classify that also knows a System's *Unsupported: it
// keeps its meaning; anything else unexpected is kind.
func classify(err error, kind protocol.ErrorKind) *protocol.Error {
	var e *protocol.Error
	var ue *Unsupported
	if !errors.As(err, &e) && errors.As(err, &ue) {
		return &protocol.Error{Kind: protocol.Unsupported, Message: ue.Message}
	}
	return protocol.Classify(err, kind)
}

// The lines between the worker and its peer besides the request and error
// (spec/README.md, "Peers", pubsub): each side writes and decodes the same
// struct.

// listeningLine: peer -> worker, once every receiver is subscribed.
type listeningLine struct {
	Type      string   `json:"type"`
	Port      int      `json:"port"`
	Endpoints []string `json:"endpoints,omitempty"` // brokerless systems: one per receiver
}

// publishedLine: worker -> peer, after publishing and flushing.
type publishedLine struct {
	Type   string  `json:"type"`
	Counts []int64 `json:"counts"` // per source
}

// servedLine: peer -> worker, once the receivers have drained.
type servedLine struct {
	Type         string           `json:"type"`
	Messages     int64            `json:"messages"`
	Bytes        int64            `json:"bytes"`
	Receivers    []ReceiverReport `json:"receivers"`
	LatencyNs    [][2]int64       `json:"latency_ns,omitempty"`     // rate > 0: the merged histogram
	LatencyMaxNs int64            `json:"latency_max_ns,omitempty"` // rate > 0
	CPUNs        int64            `json:"cpu_ns"`
}

// ReceiverReport is one receiver's counts in the peer's served line.
type ReceiverReport struct {
	Received   int64 `json:"received"`
	FirstNs    int64 `json:"first_ns"`
	LastNs     int64 `json:"last_ns"`
	OutOfOrder int64 `json:"out_of_order"`
	Duplicates int64 `json:"duplicates"`
	Corrupt    int64 `json:"corrupt"`
	Dropped    int64 `json:"dropped"`
	// Undelivered is what the broker still held for the receiver when the
	// drain ended (Backlogger), neither received nor lost.
	Undelivered int64 `json:"undelivered"`
}
