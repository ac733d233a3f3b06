package peer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"msgbench/kits/go/protocol"
)

// fakePeer, set in the environment, makes the test binary a peer:
//
//	serve     reads the request, says listening (echoing the request's
//	          variant), waits for a published line, says served, exits 0
//	error     reads the request, says an error line of kind $FAKE_PEER_KIND
//	wrong     reads the request, says served where listening is due
//	garbage   reads the request, prints a line that is not JSON
//	exit3     reads nothing, exits 3
//	silent    reads the request, says nothing until stdin closes, exits 0
//	late      reads the request, says listening, waits for stdin to close,
//	          then says an error line before it exits
//	stubborn  reads the request, starts a grandchild (sleep), says listening
//	          with the grandchild's pid, and ignores its closed stdin
const fakePeer = "MSGBENCH_KIT_TEST_PEER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakePeer); mode != "" {
		runFakePeer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runFakePeer(mode string) {
	if mode == "exit3" {
		os.Exit(3)
	}
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadBytes('\n')
	if err != nil {
		os.Exit(4)
	}
	var req protocol.Request
	if err := json.Unmarshal(line, &req); err != nil {
		os.Exit(5)
	}
	w := protocol.NewWriter(os.Stdout)
	untilStdinCloses := func() {
		for {
			if _, err := in.ReadBytes('\n'); err != nil {
				return
			}
		}
	}
	switch mode {
	case "serve":
		_ = w.Line(map[string]any{"type": "listening", "port": 40123, "variant": req.Variant})
		next, err := in.ReadBytes('\n')
		if err != nil {
			os.Exit(6)
		}
		var published struct {
			Type   string  `json:"type"`
			Counts []int64 `json:"counts"`
		}
		if json.Unmarshal(next, &published) != nil || published.Type != "published" {
			os.Exit(7)
		}
		_ = w.Line(map[string]any{"type": "served", "messages": published.Counts[0] + published.Counts[1]})
	case "error":
		_ = w.Error(protocol.Errorf(protocol.ErrorKind(os.Getenv("FAKE_PEER_KIND")), "port 5000 is in use"))
		untilStdinCloses()
	case "wrong":
		_ = w.Line(map[string]any{"type": "served"})
		untilStdinCloses()
	case "garbage":
		fmt.Println("ready")
		untilStdinCloses()
	case "silent":
		untilStdinCloses()
	case "late":
		_ = w.Line(map[string]any{"type": "listening"})
		untilStdinCloses()
		_ = w.Error(protocol.Errorf(protocol.Resource, "stdin closed before its work was done"))
	case "stubborn":
		child := exec.Command("sleep", "60")
		if err := child.Start(); err != nil {
			os.Exit(8)
		}
		_ = w.Line(map[string]any{"type": "listening", "pid": child.Process.Pid})
		untilStdinCloses()
		time.Sleep(time.Hour) // a peer that never lets go
	}
}

// start runs the test binary as a peer in the given mode.
func start(t *testing.T, mode string) *Process {
	t.Helper()
	t.Setenv(fakePeer, mode)
	p, err := Start("the server", []string{os.Args[0]}, "", []byte(`{"workload":"socket","variant":"fast"}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

func expectError(t *testing.T, err error, kind protocol.ErrorKind, want string) {
	t.Helper()
	var perr *protocol.Error
	if !errors.As(err, &perr) || perr.Kind != kind || !strings.Contains(perr.Message, want) {
		t.Fatalf("error = %v; want %s containing %q", err, kind, want)
	}
}

func TestAConversation(t *testing.T) {
	p := start(t, "serve")
	listening, err := p.Next("listening", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Port    int    `json:"port"`
		Variant string `json:"variant"`
	}
	if err := listening.Decode(&l); err != nil || l.Port != 40123 || l.Variant != "fast" {
		t.Fatalf("listening %s decoded as %+v, %v", listening.Raw, l, err)
	}
	if err := p.Send([]byte(`{"type":"published","counts":[2,3]}`)); err != nil {
		t.Fatal(err)
	}
	served, err := p.Next("served", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Messages int64 `json:"messages"`
	}
	if err := served.Decode(&s); err != nil || s.Messages != 5 {
		t.Fatalf("served %s decoded as %+v, %v", served.Raw, s, err)
	}
	if err := p.AwaitExit(ExitWithin); err != nil {
		t.Fatal(err)
	}
}

func TestTheErrorLineIsRelayedNamingWhoSaidIt(t *testing.T) {
	for _, c := range []struct {
		kind, want protocol.ErrorKind
	}{{"resource", protocol.Resource}, {"unsupported", protocol.Unsupported}, {"bad_params", protocol.Internal}} {
		t.Setenv("FAKE_PEER_KIND", string(c.kind))
		_, err := start(t, "error").Next("listening", 10*time.Second)
		expectError(t, err, c.want, "the server: port 5000 is in use")
	}
}

func TestAPeerThatMisbehaves(t *testing.T) {
	_, err := start(t, "wrong").Next("listening", 10*time.Second)
	expectError(t, err, protocol.Internal, `the server said "served" where "listening" was due`)
	_, err = start(t, "garbage").Next("listening", 10*time.Second)
	expectError(t, err, protocol.Internal, `the server printed a line that is not a JSON object where "listening" was due: "ready"`)
	_, err = start(t, "exit3").Next("listening", 10*time.Second)
	expectError(t, err, protocol.Internal,
		fmt.Sprintf(`the server [%q] exited without saying "listening" (exit status 3)`, os.Args[0]))
	begin := time.Now()
	_, err = start(t, "silent").Next("listening", 200*time.Millisecond)
	expectError(t, err, protocol.Internal, `did not say "listening" within 200ms`)
	if waited := time.Since(begin); waited > 5*time.Second {
		t.Fatalf("the limit of 200ms took %v", waited)
	}
	_, err = Start("the receivers", []string{"/nonexistent/peer"}, "", nil)
	expectError(t, err, protocol.Internal, `cannot start the receivers ["/nonexistent/peer"]`)
}

func TestExplanation(t *testing.T) {
	p := start(t, "late")
	if _, err := p.Next("listening", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.Explanation(100 * time.Millisecond); err != nil {
		t.Fatalf("an explanation from a peer that said nothing: %v", err)
	}
	p.stdin.Close() // what a worker's lost connection looks like to this peer
	expectError(t, p.Explanation(10*time.Second), protocol.Resource, "the server: stdin closed before its work was done")
}

func TestStopEndsAPeerThatExitsOnItsOwnAtOnce(t *testing.T) {
	p := start(t, "silent")
	begin := time.Now()
	p.Stop()
	if waited := time.Since(begin); waited >= ExitWithin {
		t.Fatalf("Stop took %v for a peer that exits when its stdin closes", waited)
	}
	if status := p.ExitStatus(); status != "exit status 0" {
		t.Fatalf("exit %s", status)
	}
	p.Stop() // again: nothing left to do
}

// A peer that ignores its closed stdin is killed after ExitWithin, with
// what it started (its process group).
func TestStopKillsTheProcessGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for ExitWithin")
	}
	p := start(t, "stubborn")
	listening, err := p.Next("listening", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Pid int `json:"pid"`
	}
	if err := listening.Decode(&l); err != nil || l.Pid <= 0 {
		t.Fatalf("%s: %v", listening.Raw, err)
	}
	if !alive(l.Pid) {
		t.Fatalf("the grandchild %d is not running", l.Pid)
	}
	begin := time.Now()
	p.Stop()
	if waited := time.Since(begin); waited < ExitWithin {
		t.Errorf("the stubborn peer ended after %v, before the kill", waited)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned with the peer still running")
	}
	if !strings.Contains(p.ExitStatus(), "killed") {
		t.Errorf("exit %s, want killed", p.ExitStatus())
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(l.Pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the peer's grandchild %d outlived Stop", l.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive says whether pid runs: it exists and is not a zombie (a killed
// grandchild stays one until whoever adopted it reaps it).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	fields := strings.Fields(rest)
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func TestArgv(t *testing.T) {
	t.Setenv(EnvCommand, "")
	argv, err := Argv("the server")
	self, _ := os.Executable()
	if err != nil || len(argv) != 2 || argv[0] != self || argv[1] != ServeFlag {
		t.Fatalf("without the harness: %q, %v", argv, err)
	}
	t.Setenv(EnvCommand, `["ip","netns","exec","n1","bin/msgbench-go","--serve"]`)
	if argv, err = Argv("the server"); err != nil || strings.Join(argv, " ") != "ip netns exec n1 bin/msgbench-go --serve" {
		t.Fatalf("from the harness: %q, %v", argv, err)
	}
	for _, bad := range []string{`"bin/msgbench-go --serve"`, `[]`, `[""]`, `[1]`} {
		t.Setenv(EnvCommand, bad)
		_, err = Argv("the server")
		expectError(t, err, protocol.Internal, "is not a JSON array of strings naming a command")
	}
}

// Lines serve any reader: a test double's peer in the same process.
func TestLinesFromAReader(t *testing.T) {
	ls := NewLines("the receivers", nil, strings.NewReader(
		"\n{\"type\":\"listening\",\"endpoints\":[\"127.0.0.1:1\"]}\n"+
			`{"type":"error","kind":"resource","message":"cannot subscribe"}`+"\n"), nil)
	line, err := ls.Next("listening", time.Second)
	if err != nil || line.Type != "listening" || !strings.Contains(string(line.Raw), "127.0.0.1:1") {
		t.Fatalf("%+v %v", line, err)
	}
	_, err = ls.Next("served", time.Second)
	expectError(t, err, protocol.Resource, "the receivers: cannot subscribe")
	_, err = ls.Next("served", time.Second)
	expectError(t, err, protocol.Internal, `the receivers exited without saying "served"`)
}

func TestSpawnLeavesStdoutToTheCallerAndTerminateStopsTheGroup(t *testing.T) {
	// A peer that says one line, then ignores its stdin's end: SIGTERM must stop it
	// (and the sleep it started, in its group), well before ExitWithin.
	p, stdout, err := Spawn("the server", []string{"sh", "-c", `echo '{"listening": 1}'; sleep 30`}, "")
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "{\"listening\": 1}\n" {
		t.Fatalf("stdout %q, %v", line, err)
	}
	if p.Lines != nil {
		t.Fatal("Spawn made the lines reader its caller reads itself")
	}
	started := time.Now()
	p.Terminate()
	if waited := time.Since(started); waited >= ExitWithin {
		t.Fatalf("Terminate waited %v: SIGTERM did not stop the group", waited)
	}
	if !strings.Contains(p.ExitStatus(), "terminated") {
		t.Fatalf("exit status %q, want a SIGTERM", p.ExitStatus())
	}
	p.Terminate() // safe again
}
