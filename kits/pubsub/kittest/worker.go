package kittest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"msgbench/kits/go/peer"
	"msgbench/kits/pubsub"
)

// BuildCommand builds the main package in the test's directory (a target's
// cmd/<name>) into a temporary directory and returns the binary.
func BuildCommand(t testing.TB, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// Result is a worker's answer to a request: raw facts, counts, histograms.
type Result struct {
	Type       string                `json:"type"`
	Measured   map[string]any        `json:"measured"`
	Verify     map[string]int64      `json:"verify"`
	Histograms map[string][][2]int64 `json:"histograms"`
}

// RunPubsub runs bin as the harness does: one pubsub request (variant, its
// options, params) on stdin, its peer started from MSGBENCH_PEER_COMMAND (bin
// --serve), env added to the environment. It fails t, prefixing label,
// unless bin answers a hello and a result, and returns the result.
func RunPubsub(t testing.TB, label, bin string, env []string, variant string, options pubsub.Options,
	params map[string]any) Result {
	t.Helper()
	argv, _ := json.Marshal([]string{bin, peer.ServeFlag})
	if options == nil {
		options = pubsub.Options{}
	}
	req, _ := json.Marshal(map[string]any{"workload": "pubsub", "variant": variant, "options": options,
		"repetition": 1, "params": params})
	cmd := exec.Command(bin)
	cmd.Env = append(append(os.Environ(), peer.EnvCommand+"="+string(argv)), env...)
	cmd.Stdin = bytes.NewReader(append(req, '\n'))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	var result Result
	if len(lines) != 2 || json.Unmarshal(lines[1], &result) != nil || result.Type != "result" {
		t.Fatalf("%s: want hello and result, got\n%s", label, out)
	}
	return result
}
