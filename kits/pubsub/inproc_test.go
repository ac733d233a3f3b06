package pubsub

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"

	"msgbench/kits/go/peer"
)

// inprocPeer runs serve in a goroutine on pipes: the worker and the peer in
// one test process, sharing the fake's in-memory broker.
type inprocPeer struct {
	*peer.Lines
	stdin *io.PipeWriter
	done  chan struct{}
}

func inprocStarter(sys System) peerStarter {
	return func(request []byte) (peerHandle, error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ip := &inprocPeer{Lines: peer.NewLines(who, nil, outR, func() string { return "in-process peer ended" }),
			stdin: inW, done: make(chan struct{})}
		go func() {
			defer close(ip.done)
			serve(inR, outW, serveConfig{sys: sys})
			outW.Close()
			inR.Close()
		}()
		go func() { _ = ip.Send(request) }()
		return ip, nil
	}
}

func (ip *inprocPeer) Send(line []byte) error {
	_, err := ip.stdin.Write(append(append([]byte{}, line...), '\n'))
	return err
}

func (ip *inprocPeer) Stop() {
	ip.stdin.Close()
	<-ip.done
}

// runLines runs one worker in-process and returns its output lines.
// The variant names a fake fault (fake_test.go), sent as its option; "default" has none.
func runLines(t *testing.T, sys System, variant string, params map[string]any) []map[string]any {
	t.Helper()
	req, err := json.Marshal(map[string]any{"workload": "pubsub", "variant": variant, "options": faultOptions(variant),
		"params": params, "repetition": 1})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	work(bytes.NewReader(append(req, '\n')), &out, workerConfig{name: "fake", runtimeVersion: "test",
		sys: sys, startPeer: inprocStarter(sys)})
	var lines []map[string]any
	for _, text := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var line map[string]any
		if err := json.Unmarshal(text, &line); err != nil {
			t.Fatalf("not a JSON line: %q", text)
		}
		lines = append(lines, line)
	}
	if len(lines) != 2 || lines[0]["type"] != "hello" {
		t.Fatalf("want hello and one more line, got %v", lines)
	}
	return lines
}

// faultOptions are the options of a fake variant.
func faultOptions(variant string) Options {
	if variant == "default" {
		return Options{}
	}
	return Options{"fault": variant}
}

// runResult runs one worker and returns its result line's raw facts, verify
// counts and histograms.
func runResult(t *testing.T, sys System, variant string, params map[string]any) (map[string]any, map[string]int64, map[string]any) {
	t.Helper()
	lines := runLines(t, sys, variant, params)
	if lines[1]["type"] != "result" {
		t.Fatalf("want a result, got %v", lines[1])
	}
	if _, computed := lines[1]["metrics"]; computed {
		t.Fatal("the worker computed metrics: the harness derives them")
	}
	verify := map[string]int64{}
	for k, v := range lines[1]["verify"].(map[string]any) {
		verify[k] = int64(v.(float64))
	}
	histograms, _ := lines[1]["histograms"].(map[string]any)
	return lines[1]["measured"].(map[string]any), verify, histograms
}

// params are small defaults with overrides.
func params(over map[string]any) map[string]any {
	p := map[string]any{"payload_bytes": 64, "duration_s": 0.2, "sources": 1, "source_threads": 1,
		"receivers": 1, "batching_bytes": 0, "rate": 0, "drain_ms": 200}
	for k, v := range over {
		p[k] = v
	}
	return p
}

func TestMain(m *testing.M) {
	// The subprocess-peer tests re-run this binary as the receivers.
	if variant := os.Getenv("MSGBENCH_PUBSUB_TEST_PEER"); variant != "" {
		serve(os.Stdin, os.Stdout, serveConfig{sys: newFakeSystem()})
		os.Exit(0)
	}
	os.Exit(m.Run())
}
