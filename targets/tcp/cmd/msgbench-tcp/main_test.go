package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The binary through the worker protocol, its peer started from
// MSGBENCH_PEER_COMMAND as the harness does.
func TestEndToEnd(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "msgbench-tcp")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	argv, _ := json.Marshal([]string{bin, "--serve"})
	for _, rate := range []float64{0, 5000} {
		req, _ := json.Marshal(map[string]any{"workload": "pubsub", "variant": "default", "repetition": 1,
			"params": map[string]any{"payload_bytes": 100, "duration_s": 0.3, "sources": 2, "source_threads": 2,
				"receivers": 2, "batching_bytes": 8192, "rate": rate, "drain_ms": 200}})
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "MSGBENCH_PEER_COMMAND="+string(argv))
		cmd.Stdin = bytes.NewReader(append(req, '\n'))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("rate %v: %v", rate, err)
		}
		lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
		var result struct {
			Type    string             `json:"type"`
			Metrics map[string]float64 `json:"metrics"`
			Verify  map[string]int64   `json:"verify"`
		}
		if len(lines) != 2 || json.Unmarshal(lines[1], &result) != nil || result.Type != "result" {
			t.Fatalf("rate %v: want hello and result, got\n%s", rate, out)
		}
		v := result.Verify
		if v["published"] <= 0 || v["received"] != 2*v["published"] || v["lost"] != 0 ||
			v["out_of_order"] != 0 || v["duplicates"] != 0 || v["corrupt"] != 0 || v["lossless"] != 1 {
			t.Errorf("rate %v: verify %v", rate, v)
		}
		if _, ok := result.Metrics["latency_p99_us"]; ok != (rate > 0) {
			t.Errorf("rate %v: latency present = %v", rate, ok)
		}
	}
}
