// Package pubsubkit is the shared driver of msgbench's pubsub workload
// (spec/workloads/pubsub.json): the worker protocol, parameters, sources,
// receivers, pacing, counting and latency. Each messaging system is a target of
// its own (targets/<system>/) that implements System with that system's
// maintained client library and hands it to Main.
package pubsubkit

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// Options are the variant's options from target.toml (the request's
// "options"), e.g. {"qos": 1}: one System serves all of its target's variants.
// Parameters are the harness's to check; options are the system's.
type Options map[string]any

// Bool is a boolean option; false when the variant does not set it.
func (o Options) Bool(name string) (bool, error) {
	v, ok := o[name]
	if !ok {
		return false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, fmt.Errorf("option %s = %v: expected true or false", name, v)
	}
	return b, nil
}

// Int is an integer option; def when the variant does not set it.
func (o Options) Int(name string, def int) (int, error) {
	v, ok := o[name]
	if !ok {
		return def, nil
	}
	switch n := v.(type) {
	case int: // an Options literal in Go
		return n, nil
	case float64: // decoded from the request
		if n == float64(int(n)) {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("option %s = %v: expected an integer", name, v)
}

// Unknown is an error naming the options not in known (a setting the system
// would silently ignore would measure something else), or nil.
func (o Options) Unknown(known ...string) error {
	var unknown []string
	for name := range o {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("unknown option %s (this system knows: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
}

// System is what a messaging target implements.
type System interface {
	// Check refuses what this system cannot do with these options: an
	// *Unsupported (a payload beyond what the system carries, batching the
	// client cannot turn off) or any other error for options it does not know
	// (internal). Whether the variant is lossless is target.toml's to say.
	Check(opts Options, p Params) error
	// Subscribe connects one receiver to the topics of every source. deliver is
	// called for each message, in arrival order, and never concurrently for one
	// receiver (one goroutine per receiver, or calls serialized by a lock that
	// gives the kit's counters a happens-before edge); the slice is only valid
	// during the call. Subscribe returns when the
	// subscription is in place (messages published afterwards will arrive).
	Subscribe(ctx context.Context, env Env, opts Options, p Params, receiver int, deliver func(msg []byte)) (Receiver, error)
	// Connect opens source i on its own connection.
	Connect(ctx context.Context, env Env, opts Options, p Params, source int) (Source, error)
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

// Unsupported is an unsupported answer: the combination has no honest
// implementation on this system.
type Unsupported struct{ Message string }

func (e *Unsupported) Error() string { return e.Message }
