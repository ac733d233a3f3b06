// Package worker is what every Go worker does around its workloads
// (spec/README.md, "The worker protocol"): read the request, say hello, run
// the workload the request names with the variant's options, report its raw
// facts or one error. A panic in a workload is reported as an internal
// error, not left as a crash the harness can only call a failed worker. A
// target declares a Worker (its name, workloads, server half) and calls
// Main.
package worker

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"msgbench/kits/go/peer"
	"msgbench/kits/go/protocol"
	"msgbench/kits/go/sample"
)

// UnknownVariant stands in the hello line when the request names none.
const UnknownVariant = "unknown"

// Measure runs one workload: the request in, raw facts out.
type Measure func(protocol.Request) (protocol.Result, error)

// Worker is one target's worker. Variants are data (target.toml's options,
// in the request): a worker has no table of them.
type Worker struct {
	// Target is the target's name in hello and in targets/.
	Target string
	// Workloads maps a workload's name to its measurement.
	Workloads map[string]Measure
	// Sampled lists the workloads long enough to have a time series (RSS and
	// the runtime's view, about once a second, beside the measurement); the
	// others' stay unperturbed.
	Sampled []string
	// Serve is the server half (peer.ServeFlag; spec/README.md, "Peers"),
	// or nil: it reads the worker's request on in and answers on out.
	Serve func(in io.Reader, out io.Writer) error
	// Modes are the binary's other uses, by their first argument (e.g. a
	// chat server); each is given the arguments after it.
	Modes map[string]func(args []string) error
}

// Main runs the worker as its command line says: no argument, one request
// on stdin; peer.ServeFlag, the server half; a mode's flag, that mode.
func (w Worker) Main() {
	name := filepath.Base(os.Args[0])
	run := w.Run
	switch args := os.Args[1:]; {
	case len(args) == 0:
	case len(args) == 1 && args[0] == peer.ServeFlag && w.Serve != nil:
		run = w.ServeHalf
	case w.Modes[args[0]] != nil:
		if err := w.Modes[args[0]](args[1:]); err != nil {
			fmt.Fprintf(os.Stderr, "%s %s: %v\n", name, args[0], err)
			os.Exit(1)
		}
		return
	default:
		fmt.Fprintf(os.Stderr, "usage: %s [%s] (the request on stdin)\n", name, strings.Join(w.flags(), " | "))
		os.Exit(2)
	}
	if err := run(os.Stdin, os.Stdout); err != nil {
		// stdout is gone: nothing left to report to but stderr.
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Run serves one request from in, writing the protocol lines to out. It
// returns an error only when out cannot be written.
func (w Worker) Run(in io.Reader, out io.Writer) error {
	lines := protocol.NewWriter(out)
	req, err := protocol.ReadRequest(in)
	variant := req.Variant
	if variant == "" {
		variant = UnknownVariant
	}
	if herr := lines.Hello(w.Target, runtime.Version(), variant); herr != nil {
		return herr
	}
	if err != nil {
		return lines.Error(err)
	}
	// The last sample comes before the result line, as the protocol wants.
	var sampler *sample.Sampler
	if slices.Contains(w.Sampled, req.Workload) {
		sampler = sample.Start(lines, sample.Every, sample.GoRuntime)
	}
	result, err := w.measure(req)
	if sampler != nil {
		sampler.Stop()
	}
	if err != nil {
		return lines.Error(err)
	}
	return lines.Result(result)
}

func (w Worker) measure(req protocol.Request) (result protocol.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = protocol.Errorf(protocol.Internal, "panic: %v", r)
		}
	}()
	measure, ok := w.Workloads[req.Workload]
	if !ok {
		return result, protocol.Errorf(protocol.Unsupported, "workload %q is not implemented by %s (implemented: %s)",
			req.Workload, w.Target, strings.Join(w.WorkloadNames(), ", "))
	}
	return measure(req)
}

// ServeHalf runs the server half, a panic in it reported on out. It returns
// an error only when out cannot be written.
func (w Worker) ServeHalf(in io.Reader, out io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = protocol.NewWriter(out).Error(protocol.Errorf(protocol.Internal, "panic in the server: %v", r))
		}
	}()
	return w.Serve(in, out)
}

// WorkloadNames lists the workloads, sorted.
func (w Worker) WorkloadNames() []string {
	names := make([]string, 0, len(w.Workloads))
	for name := range w.Workloads {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// flags lists the command line's choices for the usage line.
func (w Worker) flags() []string {
	var modes []string
	for mode := range w.Modes {
		modes = append(modes, mode+" ...")
	}
	sort.Strings(modes)
	if w.Serve != nil {
		return append([]string{peer.ServeFlag}, modes...)
	}
	return modes
}
