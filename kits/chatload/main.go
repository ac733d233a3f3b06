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
// Its phases: connect every client, the send window T, the drain, close;
// the server's stats are taken before the run and at each phase's edge.
func measureServer(p Params, w *protocol.Writer, sp *split) (protocol.Result, error) {
	if sp != nil && !sp.lead {
		return measureShare(p, w, sp)
	}
	srv, err := openServer(sp)
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
	var ph phases
	if ph.baseline, err = control.query(); err != nil {
		r.fail(protocol.Errorf(protocol.Internal, "the chat server at %s did not answer its stats: %v", srv.url(), err))
		return protocol.Result{}, r.failure
	}
	started, cpuStarted := time.Now(), cpuNow()
	sampler := startSampler(w, r, control, cpuStarted)
	defer sampler.Stop()

	if err := r.connectPhase(w, sp, &ph); err != nil {
		return protocol.Result{}, err
	}
	windowEnd, err := r.sendPhase(control, &ph)
	if err != nil {
		return protocol.Result{}, err
	}
	if err := r.drainPhase(control, windowEnd, &ph); err != nil {
		return protocol.Result{}, err
	}
	ph.wall, ph.cpu = time.Since(started), cpuNow()-cpuStarted
	sampler.Stop()
	if err := r.barrier(w, sp, "close"); err != nil {
		return protocol.Result{}, err
	}
	return r.result(report(r, ph)), nil
}

// openServer starts the target's chat server here, or, for a run across
// hosts, attaches to the one the harness started.
func openServer(sp *split) (*server, error) {
	if sp != nil {
		return attachServer(sp.url)
	}
	return startServer()
}

// connectPhase connects and joins every client (setup), between the
// "connect" and "send" barriers of a run across hosts.
func (r *run) connectPhase(w *protocol.Writer, sp *split, ph *phases) error {
	if err := r.barrier(w, sp, "connect"); err != nil {
		return err
	}
	started := time.Now()
	if err := r.connectAll(); err != nil {
		return err
	}
	ph.setup = time.Since(started)
	return r.barrier(w, sp, "send")
}

// sendPhase is T: the clients send, with the server's stats at its release
// and at its end. Both processes' CPU over T alone, beside the whole run's:
// connecting thousands of clients costs the load generator far more than T
// does. It returns when T ended, on the run's clock.
func (r *run) sendPhase(control *statsClient, ph *phases) (windowEnd int64, err error) {
	if ph.atRelease, err = r.stats(control, "before T"); err != nil {
		return 0, err
	}
	cpuAtRelease := cpuNow()
	ph.window = r.sendAll()
	windowEnd, cpuAtT := r.now(), cpuNow()
	ph.windowCPU = cpuAtT - cpuAtRelease
	if r.isAborted() {
		return 0, r.failure
	}
	ph.atT, err = r.stats(control, "at T")
	return windowEnd, err
}

// drainPhase waits for the messages still in flight at T, then takes the
// server's final stats.
func (r *run) drainPhase(control *statsClient, windowEnd int64, ph *phases) (err error) {
	ph.drain = r.drain(windowEnd)
	if r.isAborted() {
		return r.failure
	}
	ph.final, err = r.stats(control, "after the drain")
	return err
}

// stats queries the server's stats; a server that does not answer aborts
// the run.
func (r *run) stats(control *statsClient, when string) (stats, error) {
	st, err := control.query()
	if err != nil {
		r.fail(fmt.Errorf("the chat server did not answer its stats %s: %w", when, err))
		return stats{}, r.failure
	}
	return st, nil
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
