// Package pubsub is the shared driver of msgbench's pubsub workload
// (spec/workloads/pubsub.json): the worker protocol, parameters, sources,
// receivers, pacing, counting and latency. Each messaging system is a target of
// its own (targets/<system>/) that implements System with that system's
// maintained client library and hands it to Main.
package pubsub

import (
	"context"
	"strconv"

	"msgbench/kits/go/options"
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

// EnvServiceURL is the variable with which the harness gives the broker's URL.
const EnvServiceURL = "MSGBENCH_SERVICE_URL"

// EnvListenHost is the variable with which the harness gives the receivers'
// process the address to listen on when it runs on another host than the
// sources (docs/hosts.md): that host's address, which the sources can reach.
const EnvListenHost = "MSGBENCH_LISTEN_HOST"

// loopback is where brokerless receivers listen when the sources share their host.
const loopback = "127.0.0.1"

// Env is where the system lives, from the harness's environment.
type Env struct {
	// ServiceURL is the broker's URL (MSGBENCH_SERVICE_URL, e.g. nats://127.0.0.1:4222);
	// empty for brokerless systems.
	ServiceURL string
	// Endpoints are what the receivers announced (brokerless systems such as tcp:
	// one "host:port" per receiver); empty for brokered systems.
	Endpoints []string
	// ListenHost is MSGBENCH_LISTEN_HOST, the receivers' process's only: empty
	// when the sources share its host (ListenAddress then says loopback).
	ListenHost string
}

// ListenAddress is the address brokerless receivers listen on: their host's
// when the harness placed them on another host than the sources, else loopback.
func (e Env) ListenAddress() string {
	if e.ListenHost != "" {
		return e.ListenHost
	}
	return loopback
}

// Topic is source i's topic.
func Topic(source int) string { return "msgbench." + strconv.Itoa(source) }

// Options are the variant's options from target.toml (the request's
// "options"), e.g. {"qos": 1}: one System serves all of its target's variants.
// Parameters are the harness's to check; options are the system's, read with
// the Go kit's reader (an option a system does not know is an error naming it).
type Options = options.Options

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

// Backlogger is what a Receiver also implements when its system can say how
// many messages it still holds for the receiver (a broker's queue depth), so
// that a receiver the broker has stopped feeding for a while (a broker starved
// of CPU on a loaded machine) is not taken for one that has everything, and
// what it never got is counted as undelivered, not lost. Systems whose broker
// keeps no per-receiver backlog (NATS core, Redis pub/sub, MQTT at QoS 0:
// each message is written to the subscriber's connection or dropped) do not
// implement it.
type Backlogger interface {
	// Backlog is how many messages the system holds for this receiver that
	// have not yet been sent to its client. The kit calls it while deliver
	// runs, from another goroutine; it may block while the broker is slow
	// (the kit waits for it in a goroutine of its own).
	Backlog() (int64, error)
	// Halt stops the system's delivery to this receiver and returns once
	// deliver has run for every message already sent to the client (what the
	// client library buffered), so that a Backlog after it counts exactly
	// the messages that never reached the receiver. Close follows.
	Halt() error
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
