package pubsub

import (
	"bytes"

	"msgbench/kits/go/protocol"
)

// Workload is the workload name this kit serves.
const Workload = "pubsub"

// request is the one object the harness writes to the worker's stdin
// (spec/request.schema.json), its params decoded. The harness has checked
// every parameter against spec/workloads/pubsub.json, defaults filled in: the
// kit decodes, it does not validate.
type request struct {
	protocol.Request
	Params Params // decoded from Request.Params
}

// parseRequest decodes the request. The variant is returned even with an
// error, for the hello line. A request the kit cannot decode (a parameter it
// does not know, a value of the wrong type) is internal: the spec and the kit
// disagree.
func parseRequest(line []byte) (request, error) {
	r, err := protocol.ReadRequest(bytes.NewReader(line))
	req := request{Request: r}
	if err != nil {
		return req, err
	}
	if req.Workload != Workload {
		return req, protocol.Errorf(protocol.Unsupported,
			"workload %q is not implemented here: this worker serves only %q", req.Workload, Workload)
	}
	return req, r.DecodeParams(&req.Params)
}
