package pubsubkit

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Workload is the workload name this kit serves.
const Workload = "pubsub"

// request is the one object the harness writes to the worker's stdin.
type request struct {
	Workload   string
	Variant    string
	Params     Params
	Repetition int64
}

// paramRange is one parameter's accepted range (spec/workloads/pubsub.json).
type paramRange struct {
	name     string
	integer  bool
	min, max float64
	set      func(p *Params, v float64)
}

var paramRanges = []paramRange{
	{"payload_bytes", true, 16, 1048576, func(p *Params, v float64) { p.PayloadBytes = int(v) }},
	{"duration_s", false, 0.1, 3600, func(p *Params, v float64) { p.DurationS = v }},
	{"sources", true, 1, 64, func(p *Params, v float64) { p.Sources = int(v) }},
	{"source_threads", true, 1, 64, func(p *Params, v float64) { p.SourceThreads = int(v) }},
	{"receivers", true, 1, 64, func(p *Params, v float64) { p.Receivers = int(v) }},
	{"batching_bytes", true, 0, 16777216, func(p *Params, v float64) { p.BatchingBytes = int(v) }},
	{"rate", false, 0, 100000000, func(p *Params, v float64) { p.Rate = v }},
	{"drain_ms", true, 100, 600000, func(p *Params, v float64) { p.DrainMs = int(v) }},
}

// parseRequest decodes and validates the request line. A malformed request
// is bad_params: the harness sent something the worker cannot use. The
// variant is returned even with an error, for the hello line.
func parseRequest(line []byte) (request, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil || raw == nil {
		return request{}, errorf(KindBadParams, "the request is not a JSON object: %.200q", line)
	}
	var req request
	_ = json.Unmarshal(raw["workload"], &req.Workload)
	_ = json.Unmarshal(raw["variant"], &req.Variant)
	for key := range raw {
		switch key {
		case "workload", "variant", "params", "repetition":
		default:
			return req, errorf(KindBadParams, "the request has an unknown field %q", key)
		}
	}
	if req.Workload != Workload {
		return req, errorf(KindUnsupported, "workload %q is not implemented here: this worker serves only %q", req.Workload, Workload)
	}
	if req.Variant == "" {
		return req, errorf(KindBadParams, "the request needs a non-empty string \"variant\"")
	}
	if err := json.Unmarshal(raw["repetition"], &req.Repetition); err != nil || req.Repetition < 1 {
		return req, errorf(KindBadParams, "the request needs an integer \"repetition\" >= 1")
	}
	p, err := parseParams(raw["params"])
	if err != nil {
		return req, err
	}
	req.Params = p
	return req, nil
}

// parseParams checks every parameter is there, a number of the right kind,
// within its range, and that no unknown one is present.
func parseParams(data json.RawMessage) (Params, error) {
	var p Params
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return p, errorf(KindBadParams, "the request needs an object \"params\"")
	}
	known := map[string]bool{}
	for _, r := range paramRanges {
		known[r.name] = true
		value, ok := raw[r.name]
		if !ok {
			return p, errorf(KindBadParams, "parameter %s is missing: %s", r.name, r.describe())
		}
		var v float64
		if err := json.Unmarshal(value, &v); err != nil || math.IsNaN(v) {
			return p, errorf(KindBadParams, "%s = %s is not a number: %s", r.name, value, r.describe())
		}
		if r.integer && v != math.Trunc(v) {
			return p, errorf(KindBadParams, "%s = %s is not an integer: %s", r.name, value, r.describe())
		}
		if v < r.min || v > r.max {
			return p, errorf(KindBadParams, "%s = %s is out of range: %s", r.name, value, r.describe())
		}
		r.set(&p, v)
	}
	var unknown []string
	for key := range raw {
		if !known[key] {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return p, errorf(KindBadParams, "unknown parameter(s) %s", strings.Join(unknown, ", "))
	}
	if p.SourceThreads > p.Sources {
		return p, errorf(KindBadParams,
			"source_threads = %d is out of range: source_threads must be an integer from 1 to sources (%d)",
			p.SourceThreads, p.Sources)
	}
	return p, nil
}

func (r paramRange) describe() string {
	kind := "a number"
	if r.integer {
		kind = "an integer"
	}
	return fmt.Sprintf("%s must be %s from %g to %g", r.name, kind, r.min, r.max)
}
