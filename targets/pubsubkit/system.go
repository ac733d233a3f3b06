// Package pubsubkit is the shared driver of msgbench's pubsub workload
// (spec/workloads/pubsub.json): the worker protocol, parameters, sources,
// receivers, pacing, counting and latency. Each messaging system is a target of
// its own (targets/<system>/) that implements System with that system's
// maintained client library and hands it to Main.
package pubsubkit

import (
	"context"
	"strconv"
)

// Params are the workload's parameters, already defaulted by the harness.
type Params struct {
	PayloadBytes  int     `json:"payload_bytes"`
	DurationS     float64 `json:"duration_s"`
	Sources       int     `json:"sources"`
	SourceThreads int     `json:"source_threads"`
	Receivers     int     `json:"receivers"`
	BatchingBytes int     `json:"batching_bytes"`
	Rate          float64 `json:"rate"`
	DrainMs       int     `json:"drain_ms"`
}

// Env is where the system lives, from the harness's environment.
type Env struct {
	// ServiceURL is the broker's URL (MSGBENCH_SERVICE_URL, e.g. nats://127.0.0.1:4222);
	// empty for brokerless systems.
	ServiceURL string
	// Endpoints are what the receivers announced (brokerless systems such as tcp:
	// one "host:port" per receiver); empty for brokered systems.
	Endpoints []string
}

// Topic is source i's topic.
func Topic(source int) string { return "msgbench." + strconv.Itoa(source) }

// System is what a messaging target implements. Variant is the request's variant
// name (e.g. "qos1"), so one System serves all of its target's variants.
type System interface {
	// Check refuses what this system or variant cannot do: a *ParamError
	// (bad_params: payload beyond what the system accepts) or an *Unsupported
	// (e.g. batching the client cannot turn off).
	Check(variant string, p Params) error
	// Lossless says whether this variant's configuration delivers every message
	// to every live receiver (flow control or queues instead of drops).
	Lossless(variant string) bool
	// Subscribe connects one receiver to the topics of every source. deliver is
	// called for each message, in arrival order, and never concurrently for one
	// receiver (one goroutine per receiver, or calls serialized by a lock that
	// gives the kit's counters a happens-before edge); the slice is only valid
	// during the call. Subscribe returns when the
	// subscription is in place (messages published afterwards will arrive).
	Subscribe(ctx context.Context, env Env, variant string, p Params, receiver int, deliver func(msg []byte)) (Receiver, error)
	// Connect opens source i on its own connection.
	Connect(ctx context.Context, env Env, variant string, p Params, source int) (Source, error)
}

// Receiver is one live subscription.
type Receiver interface {
	// Endpoint is the address sources connect to (brokerless systems), or "".
	Endpoint() string
	// Dropped is what the client library or the server told it was dropped
	// (e.g. a NATS slow-consumer count, a Redis disconnect), for the report.
	Dropped() int64
	// Close ends the subscription and returns only once deliver is no longer
	// running and will not be called again (the kit reads the receiver's
	// counts right after).
	Close() error
}

// Source publishes on its topic; it is used by one goroutine at a time.
type Source interface {
	// Publish hands one message (header included) to the system; msg may be
	// reused by the caller after Publish returns.
	Publish(msg []byte) error
	// Flush pushes out anything batched and waits until the system has it
	// (e.g. a NATS Flush, publisher confirms outstanding).
	Flush() error
	Close() error
}

// ParamError is a bad_params answer: name, value and the accepted range.
type ParamError struct{ Message string }

func (e *ParamError) Error() string { return e.Message }

// Unsupported is an unsupported answer: the combination has no honest
// implementation on this system.
type Unsupported struct{ Message string }

func (e *Unsupported) Error() string { return e.Message }
