// Package protocol implements the worker side of the msgbench worker protocol
// (spec/README.md): one JSON request on stdin, JSON lines on stdout.
package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrorKind is the "kind" of an error line.
type ErrorKind string

// The error kinds the protocol knows.
const (
	BadParams   ErrorKind = "bad_params"
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

// Request is the one object the harness writes to the worker's stdin.
type Request struct {
	Workload   string
	Variant    string
	Params     map[string]any // numbers are json.Number, so integers stay exact
	Repetition int64
}

// ReadRequest decodes the request. A malformed request is a bad_params error:
// the harness sent something the worker cannot use.
func ReadRequest(r io.Reader) (Request, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return Request{}, Errorf(BadParams, "the request is not a JSON object: %v", err)
	}
	if raw == nil {
		return Request{}, Errorf(BadParams, "the request is not a JSON object: null")
	}
	var req Request
	// Pick up workload and variant first so that a later error can still be
	// attributed to the variant in the hello line.
	req.Workload, _ = raw["workload"].(string)
	req.Variant, _ = raw["variant"].(string)
	for key := range raw {
		switch key {
		case "workload", "variant", "params", "repetition":
		default:
			return req, Errorf(BadParams, "the request has an unknown field %q", key)
		}
	}
	if req.Workload == "" {
		return req, Errorf(BadParams, "the request needs a non-empty string \"workload\"")
	}
	if req.Variant == "" {
		return req, Errorf(BadParams, "the request needs a non-empty string \"variant\"")
	}
	params, ok := raw["params"].(map[string]any)
	if !ok {
		return req, Errorf(BadParams, "the request needs an object \"params\"")
	}
	req.Params = params
	rep, ok := raw["repetition"].(json.Number)
	if !ok {
		return req, Errorf(BadParams, "the request needs an integer \"repetition\" >= 1")
	}
	n, err := rep.Int64()
	if err != nil || n < 1 {
		return req, Errorf(BadParams, "repetition = %s is out of range: repetition must be an integer >= 1", rep)
	}
	req.Repetition = n
	return req, nil
}

// Result is the payload of a result line.
type Result struct {
	Metrics map[string]float64
	Verify  map[string]int64
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
		Type    string             `json:"type"`
		Metrics map[string]float64 `json:"metrics"`
		Verify  map[string]int64   `json:"verify"`
	}{"result", r.Metrics, r.Verify})
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
