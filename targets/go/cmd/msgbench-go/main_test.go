package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"msgbench/kits/go/peer"
)

// runAsWorker makes the test binary act as the worker when re-executed by
// the tests below, so the real main is driven through real stdin/stdout.
// With --serve alone it is the server half: a socket worker run without the
// harness's environment starts its own executable so.
const runAsWorker = "MSGBENCH_GO_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsWorker) == "1" || (len(os.Args) == 2 && os.Args[1] == peer.ServeFlag) {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runWorker(t *testing.T, request string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), runAsWorker+"=1")
	for _, env := range []string{"MSGBENCH_PEER_COMMAND", "MSGBENCH_PEER_CWD", "MSGBENCH_PEER_HOST"} {
		cmd.Env = append(cmd.Env, env+"=")
	}
	cmd.Stdin = strings.NewReader(request)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("worker failed: %v (stderr %q)", err, errOut.String())
	}
	return out.String(), errOut.String()
}

func TestWorkerProcessSpeaksTheProtocol(t *testing.T) {
	for _, request := range []string{
		`{"workload":"ring","variant":"default","params":{"n":100,"m":2,"payload":"BOO!"},"repetition":1}` + "\n",
		`{"workload":"pubsub","variant":"default","params":{},"repetition":1}` + "\n", // unsupported
		// The worker starts this binary with --serve as its server half.
		`{"workload":"socket","variant":"default","params":{"mode":"flow","size":10,"total_bytes":1000,"sockets":2,` +
			`"data":"binary","placement":"local","check_content":1,"port":0},"repetition":1}` + "\n",
	} {
		stdout, stderr := runWorker(t, request)
		if stderr != "" {
			t.Errorf("stderr %q", stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("want two lines, got %q", stdout)
		}
		if strings.Contains(request, "socket") && !strings.Contains(lines[1], `"messages_received":200`) {
			t.Fatalf("socket result %q", lines[1])
		}
		types := []string{}
		for _, line := range lines {
			var msg struct{ Type string }
			if err := json.Unmarshal([]byte(line), &msg); err != nil {
				t.Fatalf("not a JSON line: %q", line)
			}
			types = append(types, msg.Type)
		}
		if types[0] != "hello" || (types[1] != "result" && types[1] != "error") {
			t.Fatalf("line types %v", types)
		}
	}
}
