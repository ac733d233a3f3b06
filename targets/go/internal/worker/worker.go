// Package worker is one msgbench worker: read the request, say hello, run
// the workload with the variant's options, report the raw facts.
package worker

import (
	"io"
	"runtime"
	"sort"
	"strings"

	"msgbench/kits/go/protocol"
	"msgbench/kits/go/sample"
	"msgbench/targets/go/internal/chat"
	"msgbench/targets/go/internal/fanin"
	"msgbench/targets/go/internal/ring"
	"msgbench/targets/go/internal/socket"
)

// Target is this target's name in the protocol and in targets/.
const Target = "go"

// unknownVariant stands in the hello line when the request names none.
const unknownVariant = "unknown"

// workloads maps a workload's name to its measurement. Variants are data
// (target.toml's options, in the request): the worker has no table of them.
var workloads = map[string]func(protocol.Request) (protocol.Result, error){
	"ring":  ring.Measure,
	"fanin": fanin.Measure,
	"chat":  chat.Measure,
	// The worker is the client; it starts the server half (Serve) itself.
	"socket": socket.Measure,
}

// Run serves one request from in, writing the protocol lines to out. It
// returns an error only when out cannot be written.
func Run(in io.Reader, out io.Writer) error {
	w := protocol.NewWriter(out)
	req, err := protocol.ReadRequest(in)
	variant := req.Variant
	if variant == "" {
		variant = unknownVariant
	}
	if herr := w.Hello(Target, runtime.Version(), variant); herr != nil {
		return herr
	}
	if err != nil {
		return w.Error(err)
	}
	// The chat workload's time series (RSS and the runtime's view), taken
	// beside the measurement; the other workloads' stay unperturbed.
	// The last sample comes before the result line, as the protocol wants.
	var sampler *sample.Sampler
	if req.Workload == "chat" {
		sampler = sample.Start(w, sample.Every, sample.GoRuntime)
	}
	result, err := serve(req)
	if sampler != nil {
		sampler.Stop()
	}
	if err != nil {
		return w.Error(err)
	}
	return w.Result(result)
}

func serve(req protocol.Request) (result protocol.Result, err error) {
	defer func() {
		// A bug in a workload is reported, not left as a crash the harness
		// can only call a failed worker.
		if r := recover(); r != nil {
			err = protocol.Errorf(protocol.Internal, "panic: %v", r)
		}
	}()
	measure, ok := workloads[req.Workload]
	if !ok {
		return result, protocol.Errorf(protocol.Unsupported, "workload %q is not implemented by %s (implemented: %s)",
			req.Workload, Target, strings.Join(WorkloadNames(), ", "))
	}
	return measure(req)
}

// Serve is the server half of the socket workload (target.toml's serve):
// it reads the worker's request on in and answers on out (spec/README.md,
// "Peers"). It returns an error only when out cannot be written.
func Serve(in io.Reader, out io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = protocol.NewWriter(out).Error(protocol.Errorf(protocol.Internal, "panic in the server: %v", r))
		}
	}()
	return socket.ServeStream(in, out)
}

// WorkloadNames lists the workloads, sorted.
func WorkloadNames() []string {
	names := make([]string, 0, len(workloads))
	for name := range workloads {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
