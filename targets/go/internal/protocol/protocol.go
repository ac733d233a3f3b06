// Package protocol implements the worker side of the msgbench worker protocol
// (spec/README.md): one JSON request on stdin, JSON lines on stdout.
package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"msgbench/kits/go/options"
)

// ErrorKind is the "kind" of an error line. Parameters are the harness's to
// check (it sends only valid ones), so a worker has no bad_params.
type ErrorKind string

// The error kinds a worker reports.
const (
	Unsupported ErrorKind = "unsupported"
	Resource    ErrorKind = "resource"
	Internal    ErrorKind = "internal"
)

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

// Request is the one object the harness writes to the worker's stdin
// (spec/request.schema.json): checked by the harness, every parameter present
// and in range.
type Request struct {
	Workload   string          `json:"workload"`
	Variant    string          `json:"variant"`
	Options    Options         `json:"options"`
	Params     json.RawMessage `json:"params"`
	Repetition int64           `json:"repetition"`
	Warmup     bool            `json:"warmup"`
}

// ReadRequest decodes the request. One the worker cannot decode is an
// internal error: the harness validated it, so the two disagree.
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
// request. The harness filled in every default and checked every range, so
// a field that does not decode is the worker's bug: internal.
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
// the rest, so a setting the worker would silently ignore is an error instead
// (reported as internal, as every error that is not an *Error).
type Options = options.Options

// Result is the payload of a result line: raw facts only (durations and CPU
// times in ns, byte totals, counts, per-socket lists), the verify counts,
// and histograms as sparse [bucket, count] pairs. The harness derives every
// metric from them (spec/workloads/*.json).
type Result struct {
	Measured   map[string]any
	Verify     map[string]int64
	Histograms map[string][][2]int64
}

// Writer writes the protocol's JSON lines, one Write per line.
type Writer struct {
	out io.Writer
}

// NewWriter returns a Writer on out (the worker's stdout).
func NewWriter(out io.Writer) *Writer { return &Writer{out: out} }

// Hello writes the first line of every worker.
func (w *Writer) Hello(target, runtimeVersion, variant string) error {
	return w.line(struct {
		Type           string `json:"type"`
		Target         string `json:"target"`
		RuntimeVersion string `json:"runtime_version"`
		Variant        string `json:"variant"`
	}{"hello", target, runtimeVersion, variant})
}

// Progress writes an optional progress line.
func (w *Writer) Progress(done, total int64) error {
	return w.line(struct {
		Type  string `json:"type"`
		Done  int64  `json:"done"`
		Total int64  `json:"total"`
	}{"progress", done, total})
}

// Result writes the result line.
func (w *Writer) Result(r Result) error {
	return w.line(struct {
		Type       string                `json:"type"`
		Measured   map[string]any        `json:"measured"`
		Verify     map[string]int64      `json:"verify"`
		Histograms map[string][][2]int64 `json:"histograms,omitempty"`
	}{"result", r.Measured, r.Verify, r.Histograms})
}

// Listening writes the line with which the server half of a peer workload
// (socket) says it accepts connections on port (spec/README.md, "Peers").
func (w *Writer) Listening(port int) error {
	return w.line(struct {
		Type string `json:"type"`
		Port int    `json:"port"`
	}{"listening", port})
}

// Served writes the server half's last line: what it received, all
// connections together.
func (w *Writer) Served(messages, bytes int64) error {
	return w.line(struct {
		Type     string `json:"type"`
		Messages int64  `json:"messages"`
		Bytes    int64  `json:"bytes"`
	}{"served", messages, bytes})
}

// Error writes an error line. An error that is not an *Error is reported as
// internal: the worker did not expect it.
func (w *Writer) Error(err error) error {
	var perr *Error
	if !errors.As(err, &perr) {
		perr = &Error{Kind: Internal, Message: err.Error()}
	}
	return w.line(struct {
		Type    string `json:"type"`
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}{"error", string(perr.Kind), perr.Message})
}

func (w *Writer) line(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode appends the newline
		return err
	}
	_, err := w.out.Write(buf.Bytes())
	return err
}
