package pubsubkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ErrorKind is the "kind" of an error line (spec/message.schema.json).
type ErrorKind string

// The error kinds a worker reports (parameters are the harness's to check).
const (
	KindUnsupported ErrorKind = "unsupported"
	KindResource    ErrorKind = "resource"
	KindInternal    ErrorKind = "internal"
)

// Error is a failure reported to the harness as an error line.
type Error struct {
	Kind    ErrorKind
	Message string
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

func errorf(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// classify turns any error into the protocol's: a System's *Unsupported keeps
// its meaning, anything else unexpected is kind.
func classify(err error, kind ErrorKind) *Error {
	var e *Error
	var ue *Unsupported
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &ue):
		return &Error{Kind: KindUnsupported, Message: ue.Message}
	}
	return &Error{Kind: kind, Message: err.Error()}
}

// lineWriter writes JSON lines, one Write per line, from any goroutine.
type lineWriter struct {
	mu  sync.Mutex
	out io.Writer
}

func newLineWriter(out io.Writer) *lineWriter { return &lineWriter{out: out} }

func (w *lineWriter) line(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode appends the newline
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.out.Write(buf.Bytes())
	return err
}

func (w *lineWriter) hello(target, runtimeVersion, variant string) error {
	return w.line(struct {
		Type           string `json:"type"`
		Target         string `json:"target"`
		RuntimeVersion string `json:"runtime_version"`
		Variant        string `json:"variant"`
	}{"hello", target, runtimeVersion, variant})
}

// result writes the result line: raw facts, verify counts, histograms
// (spec/README.md); the harness derives every metric.
func (w *lineWriter) result(r result) error {
	return w.line(struct {
		Type       string                `json:"type"`
		Measured   map[string]any        `json:"measured"`
		Verify     map[string]int64      `json:"verify"`
		Histograms map[string][][2]int64 `json:"histograms,omitempty"`
	}{"result", r.measured, r.verify, r.histograms})
}

func (w *lineWriter) error(err error) error {
	e := classify(err, KindInternal)
	return w.line(struct {
		Type    string `json:"type"`
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}{"error", string(e.Kind), e.Message})
}

// The peer's lines (spec/README.md, "Peers", pubsub).

// ReceiverReport is one receiver's counts in the peer's served line.
type ReceiverReport struct {
	Received   int64 `json:"received"`
	FirstNs    int64 `json:"first_ns"`
	LastNs     int64 `json:"last_ns"`
	OutOfOrder int64 `json:"out_of_order"`
	Duplicates int64 `json:"duplicates"`
	Corrupt    int64 `json:"corrupt"`
	Dropped    int64 `json:"dropped"`
}

// peerLine is any line the peer prints or the worker writes to the peer;
// the fields a type does not use are left out.
type peerLine struct {
	Type string `json:"type"`
	// listening
	Port      *int     `json:"port,omitempty"`
	Endpoints []string `json:"endpoints,omitempty"`
	// published (worker -> peer)
	Counts []int64 `json:"counts,omitempty"`
	// served
	Messages     int64            `json:"messages,omitempty"`
	Bytes        int64            `json:"bytes,omitempty"`
	Receivers    []ReceiverReport `json:"receivers,omitempty"`
	LatencyNs    [][2]int64       `json:"latency_ns,omitempty"`     // rate > 0: the merged histogram
	LatencyMaxNs int64            `json:"latency_max_ns,omitempty"` // rate > 0
	CPUNs        int64            `json:"cpu_ns,omitempty"`
	// error
	Kind    string `json:"kind,omitempty"`
	Message string `json:"message,omitempty"`
}

// asError turns the peer's error line into the worker's error.
func (l peerLine) asError() *Error {
	kind := ErrorKind(l.Kind)
	switch kind {
	case KindUnsupported, KindResource, KindInternal:
	default:
		kind = KindInternal
	}
	return errorf(kind, "the receivers' process: %s", l.Message)
}
