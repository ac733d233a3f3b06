package pubsub

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"msgbench/kits/go/peer"
)

func TestCountsLossless(t *testing.T) {
	measured, verify, _ := runResult(t, newFakeSystem(), "default",
		params(map[string]any{"sources": 3, "source_threads": 2, "receivers": 2}))
	if verify["published"] <= 0 {
		t.Fatalf("nothing published: %v", verify)
	}
	if verify["received"] != verify["published"]*2 || verify["lost"] != 0 || verify["receivers"] != 2 {
		t.Errorf("want every message at both receivers: %v", verify)
	}
	for _, k := range []string{"out_of_order", "duplicates", "corrupt", "dropped"} {
		if verify[k] != 0 {
			t.Errorf("%s = %d, want 0", k, verify[k])
		}
	}
	if _, said := verify["lossless"]; said {
		t.Error("the worker says lossless: that is target.toml's")
	}
	got := measured["receiver_received"].([]any)
	if len(got) != 2 || got[0].(float64) != float64(verify["published"]) || measured["publish_ns"].(float64) <= 0 ||
		measured["peak_rss_bytes"].(float64) <= 0 || measured["receiver_cpu_ns"].(float64) <= 0 {
		t.Errorf("implausible raw facts %v", measured)
	}
	first, last := measured["receiver_first_ns"].([]any), measured["receiver_last_ns"].([]any)
	if last[0].(float64) <= first[0].(float64) {
		t.Errorf("receiver 0: first %v, last %v", first[0], last[0])
	}
}

// Flat out, a thread reads the clock once per flatClockEvery rounds: each
// stamp is the last reading, never going back, and there is one reading per
// flatClockEvery messages of a source (the thread's only one here).
func TestFlatOutStampsTheLastClockReading(t *testing.T) {
	sys := newFakeSystem()
	sys.record = true
	_, verify, _ := runResult(t, sys, "default", params(map[string]any{"duration_s": 0.05}))
	times := sys.intended[0]
	if int64(len(times)) != verify["published"] || len(times) < 2*flatClockEvery {
		t.Fatalf("recorded %d stamps, published %d", len(times), verify["published"])
	}
	for k := 1; k < len(times); k++ {
		if same := k%flatClockEvery != 0; same && times[k] != times[k-1] || !same && times[k] < times[k-1] {
			t.Fatalf("message %d stamped %d after %d (a reading every %d messages)", k, times[k], times[k-1],
				flatClockEvery)
		}
	}
}

func TestLossCounted(t *testing.T) {
	_, verify, _ := runResult(t, newFakeSystem(), "lossy", params(map[string]any{"sources": 2, "receivers": 2}))
	published := verify["published"]
	// Receiver 0 loses every 10th message of each source.
	if verify["lost"] == 0 || verify["received"]+verify["lost"] != published*2 {
		t.Fatalf("loss not accounted: %v", verify)
	}
	if verify["dropped"] != verify["lost"] {
		t.Errorf("dropped = %d, lost = %d: the fake reports each loss as a drop", verify["dropped"], verify["lost"])
	}
	if verify["out_of_order"] != 0 {
		t.Errorf("unexpected %v", verify)
	}
}

func TestOrderingViolationsDetected(t *testing.T) {
	_, verify, _ := runResult(t, newFakeSystem(), "reorder", params(nil))
	// Every pair of source 0 arrives swapped at receiver 0: one violation per
	// pair (the odd one, after its successor).
	if verify["out_of_order"] < verify["published"]/2-1 || verify["lost"] != 0 {
		t.Fatalf("reordering not detected: %v", verify)
	}
}

func TestCorruptDetected(t *testing.T) {
	_, verify, _ := runResult(t, newFakeSystem(), "corrupt", params(nil))
	if want := verify["published"] / 100; verify["corrupt"] != want {
		t.Fatalf("corrupt = %d, want %d (every 100th): %v", verify["corrupt"], want, verify)
	}
}

func TestDuplicateDetected(t *testing.T) {
	_, verify, _ := runResult(t, newFakeSystem(), "duplicate", params(map[string]any{"sources": 2}))
	if verify["duplicates"] != 2 {
		t.Fatalf("duplicates = %d, want 2: %v", verify["duplicates"], verify)
	}
}

func TestPacing(t *testing.T) {
	sys := newFakeSystem()
	sys.record = true
	const rate, sources, duration = 4000.0, 2, 0.5
	measured, verify, histograms := runResult(t, sys, "default",
		params(map[string]any{"rate": rate, "sources": sources, "source_threads": 2, "duration_s": duration}))
	perSource := int64(rate / sources * duration)
	if verify["published"] != perSource*sources || verify["lost"] != 0 {
		t.Fatalf("published %d, want %d: %v", verify["published"], perSource*sources, verify)
	}
	interval := float64(sources) * 1e9 / rate
	for src, times := range sys.intended {
		if int64(len(times)) != perSource {
			t.Fatalf("source %d published %d, want %d", src, len(times), perSource)
		}
		start := times[0]
		for k, at := range times {
			if want := start + int64(float64(k)*interval+0.5); at != want {
				t.Fatalf("source %d message %d intended at +%d ns, want +%d", src, k, at-start, want-start)
			}
		}
	}
	var counted float64
	for _, pair := range histograms["latency_ns"].([]any) {
		counted += pair.([]any)[1].(float64)
	}
	if counted != float64(verify["received"]) || measured["latency_max_ns"].(float64) <= 0 {
		t.Errorf("the latency histogram counts %v of %d deliveries, max %v", counted, verify["received"],
			measured["latency_max_ns"])
	}
}

// The vectors every language's bucket function is tested against (tests/test_histogram.py).
func TestLayoutIndexMatchesTheHarness(t *testing.T) {
	for _, v := range [][2]int64{{0, 0}, {1, 1}, {127, 127}, {128, 128}, {129, 128}, {255, 191}, {256, 192},
		{1000, 317}, {65535, 703}, {1000000, 954}, {1000000000, 1591}, {1 << 40, 2240}, {1 << 62, 3648}} {
		if got := LayoutIndex(v[0]); int64(got) != v[1] {
			t.Errorf("LayoutIndex(%d) = %d, want %d", v[0], got, v[1])
		}
	}
	if LayoutIndex(1<<63-1) != histogramBuckets-1 {
		t.Errorf("the largest value's bucket %d is not the last", LayoutIndex(1<<63-1))
	}
}

func TestScheduleCount(t *testing.T) {
	for _, c := range []struct {
		rate     float64
		sources  int
		duration float64
		want     int64
	}{{1000, 1, 1, 1000}, {3, 1, 1, 3}, {7, 2, 1, 4}, {1e6, 4, 0.1, 25000}} {
		s := newSchedule(1000, Params{Rate: c.rate, Sources: c.sources, DurationS: c.duration})
		if got := s.count(); got != c.want {
			t.Errorf("rate %v sources %d duration %v: count %d, want %d", c.rate, c.sources, c.duration, got, c.want)
		}
		if s.at(0) != 1000 {
			t.Errorf("message 0 due at %d, want the start", s.at(0))
		}
	}
}

// waitUntil never wakes early, and wakes on time when it has the CPU: the
// best of ten waits is within 1 ms. One wait alone is no test of that on a busy
// machine (make test runs folders side by side): a preempted thread wakes late
// whatever it did, and one read 6.3 ms.
func TestWaitUntil(t *testing.T) {
	best := int64(time.Second)
	for range 10 {
		due := monoNow() + int64(3*time.Millisecond)
		waitUntil(due)
		late := monoNow() - due
		if late < 0 {
			t.Fatalf("woke %d ns before the due time", -late)
		}
		best = min(best, late)
	}
	if best > int64(time.Millisecond) {
		t.Fatalf("the best of ten waits woke %d ns after the due time", best)
	}
}

// The result carries exactly the spec's raw facts (broker_cpu_ns and
// tool_other_cpu_ns are a reference tool's; latency only at rate > 0).
func TestRawFactsMatchSpec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "spec", "workloads", "pubsub.json"))
	if err != nil {
		t.Skipf("spec not found: %v", err)
	}
	var spec struct {
		Measured map[string]struct {
			Optional bool `json:"optional"`
		} `json:"measured"`
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	for _, rate := range []float64{0, 2000} {
		measured, _, _ := runResult(t, newFakeSystem(), "default", params(map[string]any{"rate": rate}))
		var want, got []string
		for name, m := range spec.Measured {
			if !m.Optional || (name == "latency_max_ns" && rate > 0) {
				want = append(want, name)
			}
		}
		for name := range measured {
			got = append(got, name)
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("rate %v: measured %v, spec wants %v", rate, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		variant string
		over    map[string]any
		kind    string
		says    string
	}{
		{"default", map[string]any{"payload_bytes": 100000}, "unsupported", "too large"},
		{"nosuch", nil, "unsupported", "no fault nosuch"},
		{"failconnect", nil, "resource", "source 0: connect: fake: connection refused"},
		{"failpublish", nil, "resource", "broker went away"},
	} {
		lines := runLines(t, newFakeSystem(), c.variant, params(c.over))
		if lines[1]["type"] != "error" || lines[1]["kind"] != c.kind || !strings.Contains(lines[1]["message"].(string), c.says) {
			t.Errorf("%s %v: got %v, want a %s error saying %q", c.variant, c.over, lines[1], c.kind, c.says)
		}
	}
}

func TestRequestsTheKitCannotDecode(t *testing.T) {
	p := params(map[string]any{"colour": 1})
	if _, err := parseRequest(mustJSON(t, map[string]any{"workload": "pubsub", "variant": "v", "params": p})); err == nil ||
		!strings.Contains(err.Error(), "colour") {
		t.Errorf("unknown param: %v", err)
	}
	if _, err := parseRequest([]byte(`{"workload":"ring","variant":"default","params":{},"repetition":1}`)); err == nil {
		t.Error("a ring request was accepted")
	}
	lines := runLines(t, newFakeSystem(), "default", params(nil))
	if lines[1]["type"] != "result" {
		t.Fatalf("got %v", lines[1])
	}
}

func TestUnknownOptionsAreNamed(t *testing.T) {
	err := newFakeSystem().Check(Options{"fault": "lossy", "turbo": true}, Params{PayloadBytes: 64})
	if err == nil || !strings.Contains(err.Error(), "unknown option turbo") {
		t.Errorf("got %v", err)
	}
}

// The worker that fails (here: its sources cannot connect) leaves no
// receivers' process behind, even one that ignores its closed stdin.
func TestPeerKilledWhenWorkerFails(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the kill timeout")
	}
	for _, variant := range []string{"failconnect", "stubborn"} {
		t.Run(variant, func(t *testing.T) {
			t.Setenv("MSGBENCH_PUBSUB_TEST_PEER", variant)
			var started *peer.Process
			real := startProcessPeer([]string{os.Args[0], "-test.run=^$"}, "")
			cfg := workerConfig{name: "fake", runtimeVersion: "test", sys: newFakeSystem(),
				startPeer: func(request []byte) (peerHandle, error) {
					h, err := real(request)
					if h != nil {
						started = h.(*peer.Process)
					}
					return h, err
				}}
			p := params(nil)
			req := mustJSON(t, map[string]any{"workload": "pubsub", "variant": variant, "options": faultOptions(variant),
				"params": p, "repetition": 1})
			parsed, err := parseRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			if variant == "stubborn" {
				// The receivers subscribe, then the worker gives up at once.
				h, err := cfg.startPeer(req)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := h.Next("listening", 10*time.Second); err != nil {
					t.Fatal(err)
				}
				begin := time.Now()
				h.Stop()
				if waited := time.Since(begin); waited < peer.ExitWithin {
					t.Errorf("the stubborn peer exited after %v without the kill", waited)
				}
			} else if _, err := run(parsed, req, cfg); err == nil {
				t.Fatal("the run succeeded")
			}
			if started == nil {
				t.Fatal("no peer was started")
			}
			select {
			case <-started.Exited():
			default:
				t.Fatal("the peer process is still running")
			}
			if err := syscall.Kill(started.Pid(), 0); err != syscall.ESRCH {
				t.Fatalf("the peer's pid still exists (kill 0: %v)", err)
			}
		})
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	msg := EncodeMessage(40, 3, 0x1234_5678, 987654321)
	h, ok := decodeHeader(msg)
	if !ok || h != (Header{Source: 3, Seq: 0x1234_5678, IntendedNs: 987654321}) {
		t.Fatalf("got %+v", h)
	}
	for i := HeaderBytes; i < len(msg); i++ {
		if msg[i] != 0x78 {
			t.Fatalf("filler byte %d = %#x, want 0x78", i, msg[i])
		}
	}
}

func TestReceiverChecks(t *testing.T) {
	r := newReceiverState(Params{PayloadBytes: 32, Sources: 2})
	for _, seq := range []uint32{1, 2, 4, 4, 3, 5} { // a gap (3), then 4 again, then 3 late
		r.deliver(EncodeMessage(32, 0, seq, 0))
	}
	r.deliver(EncodeMessage(31, 1, 1, 0)) // wrong length
	r.deliver(EncodeMessage(32, 2, 1, 0)) // no such source
	bad := EncodeMessage(32, 1, 1, 0)
	bad[31] ^= 1
	r.deliver(bad) // wrong filler
	rep := r.report(0, 0)
	if rep.Received != 9 || rep.Duplicates != 1 || rep.OutOfOrder != 1 || rep.Corrupt != 3 {
		t.Fatalf("got %+v", rep)
	}
	if rep.FirstNs <= 0 || rep.LastNs < rep.FirstNs {
		t.Fatalf("times %+v", rep)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
