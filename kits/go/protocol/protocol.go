// Package protocol is the worker side of the msgbench worker protocol
// (spec/README.md): one JSON request on stdin, JSON lines on stdout. Every Go
// worker (targets/go, the pubsub kit) speaks it through this package, and so
// do their peers (the server half, the receivers' process) on their stdout.
package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"msgbench/kits/go/options"
)

// ErrorKind is the "kind" of an error line (spec/message.schema.json).
// Parameters are the harness's to check (it sends only valid ones), so a
// worker has no bad_params.
type ErrorKind string

// The error kinds a worker reports.
const (
	Unsupported ErrorKind = "unsupported"
	Resource    ErrorKind = "resource"
	Internal    ErrorKind = "internal"
)

// Known says whether k is one of the kinds above.
func (k ErrorKind) Known() bool {
	switch k {
	case Unsupported, Resource, Internal:
		return true
	}
	return false
}

// Error is a failure the worker reports to the harness as an error line.
type Error struct {
	Kind    ErrorKind
	Message string
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Errorf builds an *Error of the given kind.
func Errorf(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Classify turns any error into the protocol's: an *Error (also wrapped) as
// it is, anything else as an error of kind with its text. Writer.Error
// classifies as Internal: an error the worker did not expect.
func Classify(err error, kind ErrorKind) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: kind, Message: err.Error()}
}

// Request is the one object the harness writes to the worker's stdin
// (spec/request.schema.json): checked by the harness, every parameter present
// and in range. Params stay raw until the workload decodes them into its own
// struct (DecodeParams).
type Request struct {
	Workload   string          `json:"workload"`
	Variant    string          `json:"variant"`
	Options    Options         `json:"options"`
	Params     json.RawMessage `json:"params"`
	Repetition int64           `json:"repetition"`
	Warmup     bool            `json:"warmup"`
}

// ReadRequest decodes the request (the first JSON value on r). One the worker
// cannot decode is an internal error: the harness validated it, so the two
// disagree. What did decode (the variant, for the hello line) is returned
// with the error.
func ReadRequest(r io.Reader) (Request, error) {
	var req Request
	if err := json.NewDecoder(r).Decode(&req); err != nil {
		return req, Errorf(Internal, "cannot decode the request: %v", err)
	}
	if req.Options == nil {
		req.Options = Options{}
	}
	return req, nil
}

// DecodeParams fills p, a workload's params struct with json tags, from the
// request. The harness filled in every default and checked every range, so a
// field that does not decode, or one the struct does not know, is the
// worker's bug (or a spec it has not caught up with): internal.
func (req Request) DecodeParams(p any) error {
	dec := json.NewDecoder(bytes.NewReader(req.Params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return Errorf(Internal, "cannot decode the %s params: %v", req.Workload, err)
	}
	return nil
}

// Options are the variant's options from target.toml, as the request carries
// them (the Go kit's reader). A workload takes the ones it knows; Unknown names
// the rest, so a setting the worker would silently ignore is an error instead.
type Options = options.Options

// Result is the payload of a result line: raw facts only (durations and CPU
// times in ns, byte totals, counts, per-socket or per-receiver lists), the
// verify counts, and histograms as sparse [bucket, count] pairs. The harness
// derives every metric from them (spec/workloads/*.json).
type Result struct {
	Measured   map[string]any
	Verify     map[string]int64
	Histograms map[string][][2]int64
}

// Writer writes the protocol's JSON lines, one Write per line, from any
// goroutine (a line is never interleaved with another).
type Writer struct {
	mu  sync.Mutex
	out io.Writer
}

// NewWriter returns a Writer on out (the worker's or the peer's stdout).
func NewWriter(out io.Writer) *Writer { return &Writer{out: out} }

// Hello writes the first line of every worker.
func (w *Writer) Hello(target, runtimeVersion, variant string) error {
	return w.Line(struct {
		Type           string `json:"type"`
		Target         string `json:"target"`
		RuntimeVersion string `json:"runtime_version"`
		Variant        string `json:"variant"`
	}{"hello", target, runtimeVersion, variant})
}

// Progress writes an optional progress line.
func (w *Writer) Progress(done, total int64) error {
	return w.Line(struct {
		Type  string `json:"type"`
		Done  int64  `json:"done"`
		Total int64  `json:"total"`
	}{"progress", done, total})
}

// Result writes the result line.
func (w *Writer) Result(r Result) error {
	return w.Line(struct {
		Type       string                `json:"type"`
		Measured   map[string]any        `json:"measured"`
		Verify     map[string]int64      `json:"verify"`
		Histograms map[string][][2]int64 `json:"histograms,omitempty"`
	}{"result", r.Measured, r.Verify, r.Histograms})
}

// Sample writes an optional sample line (spec/message.schema.json): the
// worker's own view at tMS ms since it started, each name ending in its unit
// (_bytes, _count, _ns, _ms, _percent, _per_s).
func (w *Writer) Sample(tMS int64, values map[string]float64) error {
	return w.Line(struct {
		Type   string             `json:"type"`
		TMS    int64              `json:"t_ms"`
		Values map[string]float64 `json:"values"`
	}{"sample", tMS, values})
}

// Error writes an error line. An error that is not an *Error is reported as
// internal: the worker did not expect it.
func (w *Writer) Error(err error) error {
	e := Classify(err, Internal)
	return w.Line(struct {
		Type    string `json:"type"`
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}{"error", string(e.Kind), e.Message})
}

// Line writes v, a JSON object with its "type", as one line: the lines
// between a worker and its peer (listening, published, served), whose fields
// are the workload's (spec/README.md, "Peers").
func (w *Writer) Line(v any) error {
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
