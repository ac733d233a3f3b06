package worker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"msgbench/kits/go/peer"
	"msgbench/kits/go/protocol"
)

// fake is a worker with a workload of each kind the kit must handle.
var fake = Worker{
	Target: "fake",
	Workloads: map[string]Measure{
		"count": func(req protocol.Request) (protocol.Result, error) {
			return protocol.Result{Verify: map[string]int64{"repetition": int64(req.Repetition)}}, nil
		},
		"refuse": func(protocol.Request) (protocol.Result, error) {
			return protocol.Result{}, protocol.Errorf(protocol.Unsupported, "not here")
		},
		"crash": func(protocol.Request) (protocol.Result, error) { panic("a bug") },
		"long": func(protocol.Request) (protocol.Result, error) {
			time.Sleep(10 * time.Millisecond)
			return protocol.Result{Verify: map[string]int64{}}, nil
		},
	},
	Sampled: []string{"long"},
	Serve: func(in io.Reader, out io.Writer) error {
		line, _ := bufio.NewReader(in).ReadString('\n')
		if strings.Contains(line, "crash") {
			panic("a bug in the server")
		}
		_, err := io.WriteString(out, "{\"listening\": 1}\n")
		return err
	},
	Modes: map[string]func([]string) error{
		"--echo": func(args []string) error {
			if len(args) == 0 {
				return errors.New("want words")
			}
			_, err := os.Stdout.WriteString(strings.Join(args, " ") + "\n")
			return err
		},
	},
}

// asMain makes the test binary run fake.Main when re-executed by runMain.
const asMain = "MSGBENCH_KIT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		fake.Main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lines runs the fake worker on request and decodes every line it writes.
func lines(t *testing.T, request string) []map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := fake.Run(strings.NewReader(request), &out); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return decode(t, out.String())
}

func decode(t *testing.T, text string) []map[string]any {
	t.Helper()
	var decoded []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		decoded = append(decoded, msg)
	}
	return decoded
}

func request(workload string) string {
	return `{"workload":"` + workload + `","variant":"v","options":{},"params":{},"repetition":3}` + "\n"
}

func TestHelloThenTheResult(t *testing.T) {
	got := lines(t, request("count"))
	if len(got) != 2 {
		t.Fatalf("want hello and a result, got %v", got)
	}
	hello := got[0]
	if hello["type"] != "hello" || hello["target"] != "fake" || hello["variant"] != "v" ||
		hello["runtime_version"] != runtime.Version() {
		t.Fatalf("hello %v", hello)
	}
	if got[1]["type"] != "result" || got[1]["verify"].(map[string]any)["repetition"] != 3.0 {
		t.Fatalf("result %v", got[1])
	}
}

func TestErrorsAreLines(t *testing.T) {
	for _, c := range []struct{ request, variant, kind, want string }{
		{request("refuse"), "v", "unsupported", "not here"},
		{request("crash"), "v", "internal", "panic: a bug"},
		{request("pubsub"), "v", "unsupported",
			`workload "pubsub" is not implemented by fake (implemented: count, crash, long, refuse)`},
		{"ring please\n", UnknownVariant, "internal", "cannot decode the request"},
	} {
		got := lines(t, c.request)
		if len(got) != 2 || got[0]["variant"] != c.variant {
			t.Fatalf("%q: want hello (variant %q) and an error, got %v", c.request, c.variant, got)
		}
		if last := got[1]; last["type"] != "error" || last["kind"] != c.kind ||
			!strings.Contains(last["message"].(string), c.want) {
			t.Errorf("%q: error %v; want kind %s with %q", c.request, last, c.kind, c.want)
		}
	}
}

func TestOnlySampledWorkloadsWriteSamples(t *testing.T) {
	got := lines(t, request("long"))
	if len(got) < 4 || got[1]["type"] != "sample" || got[len(got)-2]["type"] != "sample" ||
		got[len(got)-1]["type"] != "result" {
		t.Fatalf("want hello, a sample at the start and at the end, then the result: %v", got)
	}
	if got := lines(t, request("count")); len(got) != 2 {
		t.Fatalf("count: want no samples, got %v", got)
	}
}

func TestServeHalfReportsAPanic(t *testing.T) {
	var out bytes.Buffer
	if err := fake.ServeHalf(strings.NewReader(request("crash")), &out); err != nil {
		t.Fatal(err)
	}
	got := decode(t, out.String())
	if len(got) != 1 || got[0]["type"] != "error" || got[0]["message"] != "panic in the server: a bug in the server" {
		t.Fatalf("server lines %v", got)
	}
}

// runMain runs fake.Main in a process of its own with args.
func runMain(t *testing.T, stdin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMain+"=1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func TestMainDispatchesOnItsArguments(t *testing.T) {
	for _, c := range []struct {
		args              []string
		stdout, stderr    string
		status            int
		stdoutIsJSONLines int
	}{
		{nil, "", "", 0, 2},
		{[]string{peer.ServeFlag}, "{\"listening\": 1}\n", "", 0, 0},
		{[]string{"--echo", "a", "b"}, "a b\n", "", 0, 0},
		{[]string{"--echo"}, "", "--echo: want words\n", 1, 0},
		{[]string{"--turbo"}, "", "usage: " + "worker.test" + " [--serve | --echo ...] (the request on stdin)\n", 2, 0},
	} {
		stdout, stderr, status := runMain(t, request("count"), c.args...)
		if status != c.status || !strings.HasSuffix(stderr, c.stderr) || (c.stderr == "" && stderr != "") {
			t.Errorf("%v: status %d, stderr %q; want %d, %q", c.args, status, stderr, c.status, c.stderr)
		}
		if c.stdoutIsJSONLines > 0 {
			if got := decode(t, stdout); len(got) != c.stdoutIsJSONLines {
				t.Errorf("%v: stdout %q", c.args, stdout)
			}
		} else if stdout != c.stdout {
			t.Errorf("%v: stdout %q; want %q", c.args, stdout, c.stdout)
		}
	}
}
