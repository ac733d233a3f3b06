package socket

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"msgbench/kits/go/peer"
	"msgbench/kits/go/protocol"
	"msgbench/targets/go/internal/histogram"
)

// fakeServer, set in the environment, makes the test binary a misbehaving
// server half: "dies" echoes fakeEchoes frames and exits; "stale" echoes the
// first frame again and again; "hold" reads fakeHeld frames before it echoes
// any of them, then echoes them all (a closed-loop client would wait forever).
const fakeServer = "MSGBENCH_GO_TEST_FAKE_SERVER"

const fakeEchoes = 3

// fakeHeld is the "hold" server's batch: the test request's 100 messages.
const fakeHeld = 100

// TestMain lets the test binary stand in for bin/msgbench-go --serve, and
// for the fake servers.
func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeServer); mode != "" {
		runFakeServer(mode)
		os.Exit(0)
	}
	if len(os.Args) == 2 && os.Args[1] == peer.ServeFlag {
		if err := ServeStream(os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runFakeServer(mode string) {
	if _, err := bufio.NewReader(os.Stdin).ReadBytes('\n'); err != nil {
		os.Exit(3)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		os.Exit(3)
	}
	w := protocol.NewWriter(os.Stdout)
	_ = w.Line(listeningLine{Type: "listening", Port: ln.Addr().(*net.TCPAddr).Port})
	c, err := ln.Accept()
	if err != nil {
		os.Exit(3)
	}
	var first []byte
	var held [][]byte
	for i := 0; ; i++ {
		var header [headerBytes]byte
		if _, err := io.ReadFull(c, header[:]); err != nil {
			os.Exit(0)
		}
		frame := make([]byte, headerBytes+int(binary.BigEndian.Uint32(header[:])))
		copy(frame, header[:])
		if _, err := io.ReadFull(c, frame[headerBytes:]); err != nil {
			os.Exit(3)
		}
		if first == nil {
			first = frame
		}
		switch mode {
		case "dies":
			if i == fakeEchoes {
				os.Exit(0) // the kernel closes the connection
			}
			_, _ = c.Write(frame)
		case "stale":
			_, _ = c.Write(first)
		case "hold":
			if held = append(held, frame); len(held) == fakeHeld {
				for _, f := range held {
					_, _ = c.Write(f)
				}
				held = nil
			}
		}
	}
}

// testRequest is a full socket request with small defaults; overrides are
// JSON members replacing them.
func testRequest(overrides map[string]any) protocol.Request {
	params := map[string]any{
		"mode": "echo", "size": 100, "total_bytes": 10000, "sockets": 1, "data": "binary", "placement": "local",
		"check_content": 1, "port": 0,
	}
	for k, v := range overrides {
		params[k] = v
	}
	raw, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return protocol.Request{Workload: Workload, Variant: "default", Options: protocol.Options{}, Params: raw, Repetition: 1}
}

// selfServer is this test binary as the server half.
func selfServer() PeerConfig {
	return PeerConfig{Argv: []string{os.Args[0], peer.ServeFlag}, Host: "127.0.0.1"}
}

func runRequest(t *testing.T, req protocol.Request, opt Options, cfg PeerConfig) (Params, Outcome, error) {
	t.Helper()
	p, _, err := Parse(req)
	if err != nil {
		t.Fatalf("params: %v", err)
	}
	out, err := RunWithPeer(req, p, opt, cfg)
	return p, out, err
}

func expectError(t *testing.T, err error, kind protocol.ErrorKind, want string) {
	t.Helper()
	var perr *protocol.Error
	if !errors.As(err, &perr) || perr.Kind != kind || !strings.Contains(perr.Message, want) {
		t.Fatalf("error = %v; want %s containing %q", err, kind, want)
	}
}

func TestEchoAndFlowCountExactly(t *testing.T) {
	for _, mode := range []string{ModeEcho, ModeFlow} {
		for _, sockets := range []int{1, 4} {
			for _, sizes := range [][2]int{{100, 10000}, {7, 100}, {1, 50}, {5000, 4999 + 5000}, {300000, 300000}} {
				for _, opt := range []Options{{}, {BufferedFlow: true}} {
					name := fmt.Sprintf("%s/sockets=%d/size=%d/total=%d/buffered=%v", mode, sockets, sizes[0], sizes[1],
						opt.BufferedFlow)
					t.Run(name, func(t *testing.T) {
						req := testRequest(map[string]any{"mode": mode, "sockets": sockets, "size": sizes[0],
							"total_bytes": sizes[1]})
						p, out, err := runRequest(t, req, opt, selfServer())
						if err != nil {
							t.Fatal(err)
						}
						n := int64(sockets) * p.Messages()
						if out.Sent != n || out.SentBytes != n*p.Size || out.Mismatches != 0 {
							t.Fatalf("sent %d messages, %d bytes, %d mismatches; want %d, %d, 0",
								out.Sent, out.SentBytes, out.Mismatches, n, n*p.Size)
						}
						if out.Served != n || out.ServedBytes != n*p.Size {
							t.Fatalf("served %d messages, %d bytes; want %d, %d", out.Served, out.ServedBytes, n, n*p.Size)
						}
						wantBack := n
						if p.Flow {
							wantBack = 0
						}
						if out.Received != wantBack || out.ReceivedBytes != wantBack*p.Size {
							t.Fatalf("received %d echoes, %d bytes; want %d", out.Received, out.ReceivedBytes, wantBack)
						}
						if len(out.Elapsed) != sockets || out.Wall <= 0 {
							t.Fatalf("times %v, wall %v", out.Elapsed, out.Wall)
						}
						result := report(p, out, 1)
						v := result.Verify
						if v["messages_sent"] != n || v["messages_received"] != n || v["bytes_sent"] != n*p.Size ||
							v["bytes_received"] != n*p.Size || v["content_mismatches"] != 0 {
							t.Fatalf("verify %v", v)
						}
						if m := result.Measured; len(m["elapsed_ns"].([]int64)) != sockets || m["wall_ns"].(int64) <= 0 {
							t.Fatalf("measured %v", m)
						}
					})
				}
			}
		}
	}
}

func TestMessagesPerSocket(t *testing.T) {
	for _, c := range []struct{ size, total, want int64 }{
		{1024, 4194304, 4096}, {16, 4194304, 262144}, {7, 100, 14}, {100, 100, 1}, {3000, 5999, 1},
	} {
		if got := (Params{Size: c.size, TotalBytes: c.total}).Messages(); got != c.want {
			t.Errorf("size %d total %d: %d messages, want %d", c.size, c.total, got, c.want)
		}
	}
}

func TestFramesChangeFromMessageToMessage(t *testing.T) {
	for _, c := range []struct{ size, messages, frames int64 }{
		{16, 262144, maxValues}, {1 << 20, 4, 4}, {64 << 20, 256, 2}, {1 << 20, 1000, 63}, {10, 1, 1},
	} {
		if got := frameCount(c.size, c.messages); got != c.frames {
			t.Errorf("size %d, %d messages: %d frames, want %d", c.size, c.messages, got, c.frames)
		}
	}
	f := NewFrames(5, 600)
	for i := int64(0); i < 600; i++ {
		frame := f.Frame(i)
		if len(frame) != headerBytes+5 || binary.BigEndian.Uint32(frame) != 5 {
			t.Fatalf("frame %d: %v", i, frame)
		}
		if v := byte(i % maxValues); frame[headerBytes] != v || frame[len(frame)-1] != v {
			t.Fatalf("frame %d holds %d, want %d", i, frame[headerBytes], v)
		}
		if i > 0 && f.Frame(i - 1)[headerBytes] == frame[headerBytes] {
			t.Fatalf("frames %d and %d hold the same value", i-1, i)
		}
	}
}

func TestParse(t *testing.T) {
	req := testRequest(map[string]any{"mode": "flow", "sockets": 3})
	req.Options = protocol.Options{"buffered_flow": true}
	p, opt, err := Parse(req)
	if err != nil || !p.Flow || p.Sockets != 3 || !p.CheckContent || !opt.BufferedFlow || p.Rate != 0 {
		t.Fatalf("%+v %+v %v", p, opt, err)
	}
	if p, _, err = Parse(testRequest(map[string]any{"rate": 2500.5})); err != nil || p.Rate != 2500.5 {
		t.Fatalf("rate: %+v %v", p, err)
	}
	_, _, err = Parse(testRequest(map[string]any{"data": "list"}))
	expectError(t, err, protocol.Unsupported, `data = "list" is an Erlang notion`)
	req.Options = protocol.Options{"nodelay": false}
	// A plain error: the protocol writer reports it as internal (worker_test.go checks the line).
	if _, _, err = Parse(req); err == nil || !strings.Contains(err.Error(), "unknown option nodelay") {
		t.Fatalf("error = %v", err)
	}
}

func TestMeasureStartsItsOwnServerWithoutTheHarness(t *testing.T) {
	for _, env := range []string{peer.EnvCommand, peer.EnvCwd, peer.EnvHost} {
		t.Setenv(env, "")
		os.Unsetenv(env)
	}
	result, err := Measure(testRequest(map[string]any{"mode": "flow", "sockets": 2}))
	if err != nil {
		t.Fatal(err)
	}
	if v := result.Verify; v["messages_received"] != 200 || v["bytes_received"] != 20000 {
		t.Fatalf("verify %v", v)
	}
	_, err = Measure(testRequest(map[string]any{"placement": "remote"}))
	expectError(t, err, protocol.Unsupported, "placement = remote needs the harness")
}

func TestMeasureUsesTheHarnessesPeer(t *testing.T) {
	t.Setenv(peer.EnvCommand, `["`+os.Args[0]+`","`+peer.ServeFlag+`"]`)
	t.Setenv(peer.EnvCwd, os.TempDir())
	t.Setenv(peer.EnvHost, "127.0.0.1")
	result, err := Measure(testRequest(map[string]any{"sockets": 3}))
	if err != nil {
		t.Fatal(err)
	}
	if v := result.Verify; v["messages_received"] != 300 || v["content_mismatches"] != 0 {
		t.Fatalf("verify %v", v)
	}
	t.Setenv(peer.EnvCommand, `"bin/msgbench-go --serve"`)
	_, err = Measure(testRequest(nil))
	expectError(t, err, protocol.Internal, "is not a JSON array of strings")
}

func TestPortInUseIsAResourceError(t *testing.T) {
	taken, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	_, _, err = runRequest(t, testRequest(map[string]any{"port": port}), Options{}, selfServer())
	expectError(t, err, protocol.Resource, fmt.Sprintf("the server: port %d is in use", port))
}

func TestAFixedFreePortIsUsed(t *testing.T) {
	free, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	if _, _, err := runRequest(t, testRequest(map[string]any{"port": port}), Options{}, selfServer()); err != nil {
		t.Fatal(err)
	}
}

func TestServerThatExitsAtOnce(t *testing.T) {
	_, _, err := runRequest(t, testRequest(nil), Options{}, PeerConfig{Argv: []string{"false"}, Host: "127.0.0.1"})
	expectError(t, err, protocol.Internal, `the server ["false"] exited without saying "listening" (exit status 1)`)
	_, _, err = runRequest(t, testRequest(nil), Options{}, PeerConfig{Argv: []string{"echo", "ready"}, Host: "127.0.0.1"})
	expectError(t, err, protocol.Internal, "the server printed a line that is not a JSON object")
	_, _, err = runRequest(t, testRequest(nil), Options{},
		PeerConfig{Argv: []string{"/nonexistent/msgbench-go"}, Host: "127.0.0.1"})
	expectError(t, err, protocol.Internal, "cannot start the server")
}

func TestServerThatDiesMidSequence(t *testing.T) {
	t.Setenv(fakeServer, "dies")
	start := time.Now()
	_, _, err := runRequest(t, testRequest(nil), Options{}, PeerConfig{Argv: []string{os.Args[0]}, Host: "127.0.0.1"})
	expectError(t, err, protocol.Internal, fmt.Sprintf("the server closed socket 1 after %d of 100 messages", fakeEchoes))
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("took %v to notice", waited)
	}
}

func TestStaleEchoesAreCounted(t *testing.T) {
	t.Setenv(fakeServer, "stale")
	for _, check := range []int{0, 1} {
		_, out, err := runRequest(t, testRequest(map[string]any{"check_content": check}), Options{},
			PeerConfig{Argv: []string{os.Args[0]}, Host: "127.0.0.1"})
		// The fake never says served, but the sequence itself completes:
		// every echo after the first returns message 1's payload.
		expectError(t, err, protocol.Internal, `without saying "served"`)
		if out.Received != 100 || out.Mismatches != 99 {
			t.Fatalf("check_content=%d: %d echoes, %d mismatches; want 100, 99", check, out.Received, out.Mismatches)
		}
	}
}

func TestServerStopsWhenItsStdinCloses(t *testing.T) {
	cmd := exec.Command(os.Args[0], peer.ServeFlag)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(map[string]any{"workload": Workload, "variant": "default",
		"params": testRequest(map[string]any{"sockets": 2}).Params, "repetition": 1})
	if _, err := stdin.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"type":"listening"`) {
		t.Fatalf("first line %q", lines.Text())
	}
	stdin.Close()
	if !lines.Scan() || !strings.Contains(lines.Text(), "stdin closed before its work was done") {
		t.Fatalf("second line %q", lines.Text())
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the server did not exit")
	}
}

func TestServerRefusesAnotherWorkload(t *testing.T) {
	var out strings.Builder
	in := strings.NewReader(`{"workload":"ring","variant":"default","params":{},"repetition":1}` + "\n")
	if err := ServeStream(in, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"kind":"unsupported"`) {
		t.Fatalf("got %q", out.String())
	}
	out.Reset()
	if err := ServeStream(strings.NewReader(""), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "the server read no request on its stdin") {
		t.Fatalf("got %q", out.String())
	}
}

// latencyMedian is the lower bound of the bucket holding the median of a
// sparse histogram (msgbench/core/histogram.py's layout).
func latencyMedian(h histogram.Histogram) int64 {
	seen := uint64(0)
	for _, pair := range h.Sparse() {
		if seen += uint64(pair[1]); 2*seen >= h.Count() {
			return bucketLower(pair[0])
		}
	}
	return 0
}

// bucketLower inverts histogram.LayoutIndex: the lowest value of a bucket.
func bucketLower(index int64) int64 {
	if index < 128 {
		return index
	}
	shift := index/64 - 1
	return (index - shift*64) << shift
}

func TestOpenLoopPacesAndTimesFromTheIntendedSendTime(t *testing.T) {
	// 100 messages at 2,000/s: the last is due 49.5 ms after the first,
	// whereas 100 round trips in closed loop take a few ms.
	req := testRequest(map[string]any{"rate": 2000})
	p, out, err := runRequest(t, req, Options{}, selfServer())
	if err != nil {
		t.Fatal(err)
	}
	if out.Sent != 100 || out.Received != 100 || out.Served != 100 || out.Mismatches != 0 {
		t.Fatalf("sent %d, received %d, served %d, mismatches %d", out.Sent, out.Received, out.Served, out.Mismatches)
	}
	if due := 99 * 500 * time.Microsecond; out.Elapsed[0] < due {
		t.Fatalf("the sequence took %v, less than the last message's intended time %v: not paced", out.Elapsed[0], due)
	}
	// A fast server keeps the latency near one round trip (generous: the
	// machine may be loaded).
	if out.Latency.Count() != 100 || latencyMedian(out.Latency) > int64(10*time.Millisecond) {
		t.Fatalf("%d latencies, median %d ns", out.Latency.Count(), latencyMedian(out.Latency))
	}
	result := report(p, out, 1)
	if result.Measured["latency_max_ns"] != out.Latency.Max() || len(result.Histograms["latency_ns"]) == 0 {
		t.Fatalf("measured %v, histograms %v", result.Measured, result.Histograms)
	}
	var counted int64
	for _, pair := range result.Histograms["latency_ns"] {
		counted += pair[1]
	}
	if counted != result.Verify["messages_received"] {
		t.Fatalf("the histogram counts %d round trips, %d were received", counted, result.Verify["messages_received"])
	}
}

func TestOpenLoopChargesAServerThatFallsBehind(t *testing.T) {
	// The server echoes nothing until all 100 messages have arrived: the
	// writer must not wait for echoes, and message 0's latency runs from
	// its intended time, so it is at least the 99 intervals (99 ms at
	// 1,000/s) until message 99 was due.
	t.Setenv(fakeServer, "hold")
	req := testRequest(map[string]any{"rate": 1000})
	_, out, err := runRequest(t, req, Options{}, PeerConfig{Argv: []string{os.Args[0]}, Host: "127.0.0.1"})
	// The fake never says served; the sequence itself completes.
	expectError(t, err, protocol.Internal, `without saying "served"`)
	if out.Received != 100 || out.Mismatches != 0 || out.Latency.Count() != 100 {
		t.Fatalf("%d echoes, %d mismatches, %d latencies", out.Received, out.Mismatches, out.Latency.Count())
	}
	if held := int64(99 * time.Millisecond); out.Latency.Max() < held {
		t.Fatalf("largest latency %d ns, less than the %d ns message 0 was held", out.Latency.Max(), held)
	}
}

func TestClosedLoopReportsNoLatency(t *testing.T) {
	p, out, err := runRequest(t, testRequest(nil), Options{}, selfServer())
	if err != nil {
		t.Fatal(err)
	}
	result := report(p, out, 1)
	if _, ok := result.Measured["latency_max_ns"]; ok || result.Histograms != nil || out.Latency.Count() != 0 {
		t.Fatalf("closed loop: measured %v, histograms %v", result.Measured, result.Histograms)
	}
}

func TestScheduleSplitsTheRateOverSockets(t *testing.T) {
	start := time.Now()
	plan := newSchedule(start, 3000, 4) // 750/s per socket: 1.333 ms apart
	for _, c := range []struct {
		i    int64
		want time.Duration
	}{{0, 0}, {1, 1333333}, {3, 4 * time.Millisecond}, {750, time.Second}} {
		if got := plan.at(c.i).Sub(start); got != c.want {
			t.Errorf("message %d due at +%v, want +%v", c.i, got, c.want)
		}
	}
}

func TestSleepUntilWaitsForItsTimeOrItsStop(t *testing.T) {
	var stop atomic.Bool
	due := time.Now().Add(3 * time.Millisecond)
	if !sleepUntil(due, &stop) || time.Now().Before(due) {
		t.Fatal("woke before its time")
	}
	stop.Store(true)
	begin := time.Now()
	if sleepUntil(begin.Add(time.Hour), &stop) || time.Since(begin) > maxSleep {
		t.Fatal("a stopped pacer slept on")
	}
}
