// Command msgbench-chatload is the chat server kind's one load generator
// (docs/chat-server.md): a msgbench worker (one JSON request on stdin, JSON
// lines on stdout) that starts the target's chat server, connects G x CPG
// WebSocket clients to it, runs the chat workload's stress or realistic T
// through it, checks every delivery and reports the raw facts, the server's
// stats and its own cost.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"msgbench/kits/go/measure"
	"msgbench/kits/go/protocol"
	"msgbench/kits/go/sample"
)

// The harness names the target the load generator stands for, and its
// runtime's version, beside the peer command (msgbench/chat_server.py).
const (
	envTarget  = "MSGBENCH_CHAT_TARGET"
	envVersion = "MSGBENCH_CHAT_RUNTIME_VERSION"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: msgbench-chatload (the request on stdin; the server in MSGBENCH_PEER_COMMAND)")
		os.Exit(2)
	}
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "msgbench-chatload:", err)
		os.Exit(1)
	}
}

func serve(stdin *os.File, out *os.File) error {
	w := protocol.NewWriter(out)
	// The request is one line; across hosts the harness's go lines follow it.
	in := bufio.NewReader(stdin)
	line, _ := in.ReadBytes('\n') // an empty or cut request fails to decode below
	req, err := protocol.ReadRequest(bytes.NewReader(line))
	target := os.Getenv(envTarget)
	if target == "" {
		target = "chatload"
	}
	version := os.Getenv(envVersion)
	if version == "" {
		version = runtime.Version() + " (the load generator's)"
	}
	if herr := w.Hello(target, version, req.Variant); herr != nil {
		return herr
	}
	if err != nil {
		return w.Error(err)
	}
	p, err := parse(req)
	if err != nil {
		return w.Error(err)
	}
	sp, err := splitFromEnv(p, in)
	if err != nil {
		return w.Error(err)
	}
	result, err := measureServer(p, w, sp)
	if err != nil {
		return w.Error(err)
	}
	return w.Result(result)
}

// measureServer is one measurement; the server is stopped (its whole process
// group) and every connection closed on every path. sp: this generator's
// share of a run across hosts (the harness's server; nil: start it here).
func measureServer(p Params, w *protocol.Writer, sp *split) (protocol.Result, error) {
	if sp != nil && !sp.lead {
		return measureShare(p, w, sp)
	}
	var srv *server
	var err error
	if sp != nil {
		srv, err = attachServer(sp.url)
	} else {
		srv, err = startServer()
	}
	if err != nil {
		return protocol.Result{}, err
	}
	defer srv.stop()
	r := newRun(p, srv, sp)
	defer r.closeAll()
	go r.watchServer()

	control, err := srv.statsClient(&websocket.Dialer{HandshakeTimeout: joinWithin})
	if err != nil {
		r.fail(protocol.Errorf(protocol.Internal, "cannot reach the chat server at %s: %v", srv.url(), err))
		return protocol.Result{}, r.failure
	}
	defer control.close()
	baseline, err := control.query()
	if err != nil {
		r.fail(protocol.Errorf(protocol.Internal, "the chat server at %s did not answer its stats: %v", srv.url(), err))
		return protocol.Result{}, r.failure
	}
	started, cpuStarted := time.Now(), cpuNow()

	sampler := startSampler(w, r, control, cpuStarted)
	defer sampler.Stop()

	if err := r.barrier(w, sp, "connect"); err != nil {
		return protocol.Result{}, err
	}
	setupStarted := time.Now()
	if err := r.connectAll(); err != nil {
		return protocol.Result{}, err
	}
	setup := time.Since(setupStarted)
	if err := r.barrier(w, sp, "send"); err != nil {
		return protocol.Result{}, err
	}

	// Both processes' CPU over T alone, beside the whole run's: connecting
	// thousands of clients costs the load generator far more than T does.
	atRelease, err := control.query()
	if err != nil {
		r.fail(fmt.Errorf("the chat server did not answer its stats before T: %w", err))
		return protocol.Result{}, r.failure
	}
	cpuAtRelease := cpuNow()
	window := r.sendAll()
	windowEnd, cpuAtT := r.now(), cpuNow()
	if r.isAborted() {
		return protocol.Result{}, r.failure
	}
	atT, err := control.query()
	if err != nil {
		r.fail(fmt.Errorf("the chat server did not answer its stats at T: %w", err))
		return protocol.Result{}, r.failure
	}
	drain := r.drain(windowEnd)
	if r.isAborted() {
		return protocol.Result{}, r.failure
	}
	final, err := control.query()
	if err != nil {
		r.fail(fmt.Errorf("the chat server did not answer its stats after the drain: %w", err))
		return protocol.Result{}, r.failure
	}
	wall, cpu := time.Since(started), cpuNow()-cpuStarted
	sampler.Stop()
	if err := r.barrier(w, sp, "close"); err != nil {
		return protocol.Result{}, err
	}
	return r.result(report(r, phases{
		setup: setup, window: window, drain: drain, wall: wall, cpu: cpu,
		windowCPU: cpuAtT - cpuAtRelease,
		baseline:  baseline, atRelease: atRelease, atT: atT, final: final,
	})), nil
}

// phases are what measureServer took of each phase: its own times and CPU,
// and the server's stats before the run, at the release, at T and after the drain.
type phases struct {
	setup, window, drain, wall time.Duration
	cpu, windowCPU             int64
	baseline, atRelease        stats
	atT, final                 stats
}

// report is the raw facts of a run, from its phases and the load generator's counts.
func report(r *run, ph phases) map[string]any {
	peak, _ := measure.PeakRSSBytes()
	measured := map[string]any{
		"setup_ns":                  ph.setup.Nanoseconds(),
		"send_window_ns":            ph.window.Nanoseconds(),
		"drain_ns":                  ph.drain.Nanoseconds(),
		"received_in_window":        r.receivedInWindow.Load(),
		"processes_count":           ph.atT.Processes,
		"peak_rss_bytes":            ph.final.PeakRSSBytes,
		"latency_max_ns":            r.latency.Max(),
		"server_baseline_rss_bytes": ph.baseline.RSSBytes,
		"server_cpu_ns":             ph.final.CPUNs - ph.baseline.CPUNs,
		"server_wall_ns":            ph.wall.Nanoseconds(),
		"loadgen_cpu_ns":            ph.cpu,
		"server_window_cpu_ns":      ph.atT.CPUNs - ph.atRelease.CPUNs,
		"loadgen_window_cpu_ns":     ph.windowCPU,
		"loadgen_peak_rss_bytes":    peak,
		"connections_opened":        r.opened.Load(),
		"connections_held":          ph.atT.Connections,
		"connect_max_ns":            r.connect.Max(),
	}
	// The runtime's own total, where the server reports one under that name.
	if total, ok := ph.atT.Runtime["total_bytes"]; ok {
		measured["runtime_memory_bytes"] = int64(total)
	}
	return measured
}

// startSampler writes the load generator's and the server's view once a
// second (the server's while the run stands), from a goroutine of its own.
func startSampler(w *protocol.Writer, r *run, control *statsClient, cpuStarted int64) *sample.Sampler {
	var warned sync.Once
	return sample.Start(w, sample.Every, func() map[string]float64 {
		v := map[string]float64{
			"loadgen_cpu_ns":         float64(cpuNow() - cpuStarted),
			"loadgen_sent_count":     float64(r.sent.Load()),
			"loadgen_received_count": float64(r.received.Load()),
			"loadgen_joined_count":   float64(r.joined.Load()),
		}
		if rss, err := measure.RSSBytes(); err == nil {
			v["loadgen_rss_bytes"] = float64(rss)
		}
		if r.isAborted() {
			return v
		}
		if st, err := control.query(); err == nil {
			for name, x := range st.values(&warned) {
				v[name] = x
			}
		}
		return v
	})
}
