package main

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"msgbench/kits/go/measure"
	"msgbench/kits/go/protocol"
)

// Across hosts (docs/hosts.md) the harness starts the chat server itself and
// one load generator per clients' host; it names the server's URL, the whole
// groups this generator owns, and whether it is the lead (the one that reads
// the server's stats). Unset: the one load generator of a local run, which
// starts the server as its peer.
const (
	envServerURL = "MSGBENCH_CHAT_SERVER_URL"
	envGroups    = "MSGBENCH_CHAT_GROUPS" // FIRST:COUNT
	envLead      = "MSGBENCH_CHAT_LEAD"   // 1: this generator reads the server's stats
)

// split is this generator's share of a run placed across hosts.
type split struct {
	url        string
	firstGroup int64
	groups     int64
	lead       bool
	in         *bufio.Reader // the harness's "go" lines after each ready
}

// splitFromEnv is the share the harness gave, or nil for a local run.
func splitFromEnv(p Params, in *bufio.Reader) (*split, error) {
	raw := os.Getenv(envServerURL)
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "ws" || u.Hostname() == "" || u.Port() == "" {
		return nil, protocol.Errorf(protocol.Internal, "%s = %q is not ws://HOST:PORT/", envServerURL, raw)
	}
	s := &split{url: raw, groups: p.Groups, lead: os.Getenv(envLead) == "1", in: in}
	if g := os.Getenv(envGroups); g != "" {
		first, count, ok := strings.Cut(g, ":")
		f, err1 := strconv.ParseInt(first, 10, 64)
		c, err2 := strconv.ParseInt(count, 10, 64)
		if !ok || err1 != nil || err2 != nil || f < 0 || c < 1 || f+c > p.Groups {
			return nil, protocol.Errorf(protocol.Internal,
				"%s = %q is not FIRST:COUNT of whole groups within the run's %d", envGroups, g, p.Groups)
		}
		s.firstGroup, s.groups = f, c
	}
	return s, nil
}

// firstUser is the global index of this generator's first user: users are
// numbered group by group, so a group's members stay in one generator.
func (s *split) firstUser(cpg int64) int64 { return s.firstGroup * cpg }

// barrier says this generator reached stage and waits for the harness's go,
// which it sends once every generator has said so: the generators of a run
// connect after the lead's baseline, send from one release, and close their
// connections only once every one is done (the lead's stats at T and after the
// drain count every generator's clients).
func (s *split) barrier(w *protocol.Writer, stage string) error {
	if err := w.Line(map[string]any{"type": "ready", "stage": stage}); err != nil {
		return err
	}
	line, err := s.in.ReadString('\n')
	if err == io.EOF && line == "" {
		return protocol.Errorf(protocol.Internal, "the harness closed stdin before releasing stage %s", stage)
	}
	if err != nil && err != io.EOF {
		return err
	}
	if strings.TrimSpace(line) != "go" {
		return protocol.Errorf(protocol.Internal, "stage %s: the harness sent %.100q, not go", stage, line)
	}
	return nil
}

func (s *split) String() string {
	return fmt.Sprintf("groups %d..%d of the server at %s", s.firstGroup, s.firstGroup+s.groups-1, s.url)
}

// barrier is split.barrier for a run across hosts (nothing for a local one);
// a failure aborts the run.
func (r *run) barrier(w *protocol.Writer, sp *split, stage string) error {
	if sp == nil {
		return nil
	}
	if err := sp.barrier(w, stage); err != nil {
		r.fail(err)
		return r.failure
	}
	return nil
}

// result is the run's counts and histograms beside measured.
func (r *run) result(measured map[string]any) protocol.Result {
	return protocol.Result{
		Measured: measured,
		Verify: map[string]int64{
			"sent":            r.sent.Load(),
			"received":        r.received.Load(),
			"cross_group":     r.crossGroup.Load(),
			"self_deliveries": r.selfDeliveries.Load(),
			"users":           r.joined.Load(),
		},
		Histograms: map[string][][2]int64{"latency_ns": r.latency.Sparse(), "connect_ns": r.connect.Sparse()},
	}
}

// measureShare is a generator other than the lead: its own groups' clients,
// counts, latency and cost, without the server's stats (the lead reads them;
// the harness merges every generator's facts).
func measureShare(p Params, w *protocol.Writer, sp *split) (protocol.Result, error) {
	srv, err := attachServer(sp.url)
	if err != nil {
		return protocol.Result{}, err
	}
	r := newRun(p, srv, sp)
	defer r.closeAll()
	if err := r.barrier(w, sp, "connect"); err != nil {
		return protocol.Result{}, err
	}
	started, cpuStarted := time.Now(), cpuNow()
	if err := r.connectAll(); err != nil {
		return protocol.Result{}, err
	}
	setup := time.Since(started)
	if err := r.barrier(w, sp, "send"); err != nil {
		return protocol.Result{}, err
	}
	cpuAtRelease := cpuNow()
	window := r.sendAll()
	windowEnd, cpuAtT := r.now(), cpuNow()
	if r.isAborted() {
		return protocol.Result{}, r.failure
	}
	drain := r.drain(windowEnd)
	if r.isAborted() {
		return protocol.Result{}, r.failure
	}
	cpu := cpuNow() - cpuStarted
	if err := r.barrier(w, sp, "close"); err != nil {
		return protocol.Result{}, err
	}
	peak, _ := measure.PeakRSSBytes()
	return r.result(map[string]any{
		"setup_ns":               setup.Nanoseconds(),
		"send_window_ns":         window.Nanoseconds(),
		"drain_ns":               drain.Nanoseconds(),
		"received_in_window":     r.receivedInWindow.Load(),
		"latency_max_ns":         r.latency.Max(),
		"loadgen_cpu_ns":         cpu,
		"loadgen_window_cpu_ns":  cpuAtT - cpuAtRelease,
		"loadgen_peak_rss_bytes": peak,
		"connections_opened":     r.opened.Load(),
		"connect_max_ns":         r.connect.Max(),
	}), nil
}
