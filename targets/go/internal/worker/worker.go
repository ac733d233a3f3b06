// Package worker is one msgbench worker: read the request, say hello, run
// the workload in the requested variant, report.
package worker

import (
	"io"
	"runtime"
	"sort"
	"strings"

	"msgbench/targets/go/internal/chat"
	"msgbench/targets/go/internal/fanin"
	"msgbench/targets/go/internal/protocol"
	"msgbench/targets/go/internal/ring"
	"msgbench/targets/go/internal/socket"
)

// Target is this target's name in the protocol and in targets/.
const Target = "go"

// unknownVariant stands in the hello line when the request names none.
const unknownVariant = "unknown"

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
	result, err := serve(req)
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
	v, ok := Variants[req.Variant]
	if !ok {
		return result, protocol.Errorf(protocol.Unsupported, "variant %q is not a variant of %s (known: %s)",
			req.Variant, Target, strings.Join(VariantNames(), ", "))
	}
	measure, ok := workloads[req.Workload]
	if !ok {
		return result, protocol.Errorf(protocol.Unsupported, "workload %q is not implemented by %s (implemented: %s)",
			req.Workload, Target, strings.Join(WorkloadNames(), ", "))
	}
	if !v.Implements(req.Workload) {
		return result, protocol.Errorf(protocol.Unsupported, "variant %q of %s does not implement workload %q (it implements: %s)",
			req.Variant, Target, req.Workload, strings.Join(v.Workloads, ", "))
	}
	v.apply()
	return measure(req, v)
}

// workloads maps a workload's name to its measurement in a variant.
var workloads = map[string]func(protocol.Request, Variant) (protocol.Result, error){
	"ring": func(req protocol.Request, v Variant) (protocol.Result, error) {
		return ring.Measure(req.Params, v.Ring)
	},
	"fanin": func(req protocol.Request, v Variant) (protocol.Result, error) {
		return fanin.Measure(req.Params, v.Fanin)
	},
	"chat": func(req protocol.Request, v Variant) (protocol.Result, error) {
		return chat.Measure(req.Params, v.Chat)
	},
	// The worker is the client; it starts the server half (Serve) itself.
	"socket": func(req protocol.Request, v Variant) (protocol.Result, error) {
		return socket.Measure(req, v.Socket)
	},
}

// Serve is the server half of the socket workload (target.toml's serve):
// it reads the worker's request on in and answers on out (spec/README.md,
// "Peers"), in the request's variant. It returns an error only when out
// cannot be written.
func Serve(in io.Reader, out io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = protocol.NewWriter(out).Error(protocol.Errorf(protocol.Internal, "panic in the server: %v", r))
		}
	}()
	return socket.ServeStream(in, out, func(req protocol.Request) error {
		v, ok := Variants[req.Variant]
		if !ok {
			return protocol.Errorf(protocol.Unsupported, "variant %q is not a variant of %s (known: %s)",
				req.Variant, Target, strings.Join(VariantNames(), ", "))
		}
		if !v.Implements(req.Workload) {
			return protocol.Errorf(protocol.Unsupported, "variant %q of %s does not implement workload %q",
				req.Variant, Target, req.Workload)
		}
		v.apply()
		return nil
	})
}

// WorkloadNames lists the workloads, sorted.
func WorkloadNames() []string { return sortedKeys(workloads) }

// VariantNames lists the variants, sorted.
func VariantNames() []string { return sortedKeys(Variants) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
