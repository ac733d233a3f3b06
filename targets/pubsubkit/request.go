package pubsubkit

import (
	"bytes"
	"encoding/json"
)

// Workload is the workload name this kit serves.
const Workload = "pubsub"

// request is the one object the harness writes to the worker's stdin
// (spec/request.schema.json). The harness has checked every parameter
// against spec/workloads/pubsub.json, defaults filled in: the kit decodes,
// it does not validate.
type request struct {
	Workload   string  `json:"workload"`
	Variant    string  `json:"variant"`
	Options    Options `json:"options"`
	Params     Params  `json:"params"`
	Repetition int64   `json:"repetition"`
	Warmup     bool    `json:"warmup"`
}

// parseRequest decodes the request. The variant is returned even with an
// error, for the hello line. A request the kit cannot decode (a parameter it
// does not know, a value of the wrong type) is internal: the spec and the kit
// disagree.
func parseRequest(line []byte) (request, error) {
	var req request
	var names struct{ Variant string }
	_ = json.Unmarshal(line, &names)
	req.Variant = names.Variant
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, errorf(KindInternal, "cannot decode the request: %v", err)
	}
	if req.Workload != Workload {
		return req, errorf(KindUnsupported, "workload %q is not implemented here: this worker serves only %q", req.Workload, Workload)
	}
	if req.Options == nil {
		req.Options = Options{}
	}
	return req, nil
}
