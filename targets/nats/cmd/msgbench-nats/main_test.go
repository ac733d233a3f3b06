package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The binary through the worker protocol against a real nats-server, its
// peer started from MSGBENCH_PEER_COMMAND as the harness does.
func TestEndToEnd(t *testing.T) {
	server, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("nats-server is not on PATH (Debian package nats-server): skipping")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	srv := exec.Command(server, "-a", "127.0.0.1", "-p", fmt.Sprint(port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("nats-server did not start")
		}
	}

	bin := filepath.Join(t.TempDir(), "msgbench-nats")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	argv, _ := json.Marshal([]string{bin, "--serve"})
	for _, c := range []struct {
		batching int
		rate     float64
	}{{8192, 0}, {8192, 2000}, {0, 500}} {
		req, _ := json.Marshal(map[string]any{"workload": "pubsub", "variant": "default", "repetition": 1,
			"params": map[string]any{"payload_bytes": 100, "duration_s": 0.3, "sources": 2, "source_threads": 2,
				"receivers": 2, "batching_bytes": c.batching, "rate": c.rate, "drain_ms": 500}})
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "MSGBENCH_PEER_COMMAND="+string(argv),
			fmt.Sprintf("MSGBENCH_SERVICE_URL=nats://127.0.0.1:%d", port))
		cmd.Stdin = bytes.NewReader(append(req, '\n'))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
		var result struct {
			Type    string             `json:"type"`
			Metrics map[string]float64 `json:"metrics"`
			Verify  map[string]int64   `json:"verify"`
		}
		if len(lines) != 2 || json.Unmarshal(lines[1], &result) != nil || result.Type != "result" {
			t.Fatalf("%+v: want hello and result, got\n%s", c, out)
		}
		v := result.Verify
		if v["published"] <= 0 || v["received"]+v["lost"] != 2*v["published"] || v["out_of_order"] != 0 ||
			v["duplicates"] != 0 || v["corrupt"] != 0 || v["lossless"] != 0 {
			t.Errorf("%+v: verify %v", c, v)
		}
		if v["lost"] != 0 {
			t.Logf("%+v: %d lost (NATS core is at-most-once), %d dropped by the client", c, v["lost"], v["dropped"])
		}
		if _, ok := result.Metrics["latency_p99_us"]; ok != (c.rate > 0) {
			t.Errorf("%+v: latency present = %v", c, ok)
		}
	}
}
