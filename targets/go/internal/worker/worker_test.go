package worker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// serveLines runs the worker on request and decodes every stdout line.
func serveLines(t *testing.T, request string) []map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := Run(strings.NewReader(request), &out); err != nil {
		t.Fatalf("Run: %v", err)
	}
	text := out.String()
	if !strings.HasSuffix(text, "\n") {
		t.Fatalf("output does not end with a newline: %q", text)
	}
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		lines = append(lines, msg)
	}
	return lines
}

// expectHelloThen checks the hello line and returns the final line, which
// must be of the given type.
func expectHelloThen(t *testing.T, lines []map[string]any, variant, lastType string) map[string]any {
	t.Helper()
	if len(lines) != 2 {
		t.Fatalf("want hello and one more line, got %v", lines)
	}
	hello := lines[0]
	if hello["type"] != "hello" || hello["target"] != "go" || hello["variant"] != variant ||
		hello["runtime_version"] != runtime.Version() {
		t.Fatalf("hello line %v", hello)
	}
	last := lines[1]
	if last["type"] != lastType {
		t.Fatalf("want a %s line, got %v", lastType, last)
	}
	return last
}

func expectError(t *testing.T, request, variant, kind, wantInMessage string) {
	t.Helper()
	last := expectHelloThen(t, serveLines(t, request), variant, "error")
	msg, _ := last["message"].(string)
	if last["kind"] != kind || !strings.Contains(msg, wantInMessage) {
		t.Fatalf("error line %v; want kind %s with %q", last, kind, wantInMessage)
	}
}

func TestRingThroughTheProtocol(t *testing.T) {
	last := expectHelloThen(t, serveLines(t,
		`{"workload":"ring","variant":"default","params":{"n":50,"m":3,"payload":"BOO!"},"repetition":1}`+"\n"),
		"default", "result")
	verify := last["verify"].(map[string]any)
	if verify["hops"] != 150.0 || verify["laps"] != 3.0 || verify["links"] != 50.0 {
		t.Fatalf("verify %v", verify)
	}
	metrics := last["metrics"].(map[string]any)
	if metrics["hops_per_s"].(float64) <= 0 {
		t.Fatalf("metrics %v", metrics)
	}
}

func TestFaninThroughTheProtocol(t *testing.T) {
	last := expectHelloThen(t, serveLines(t,
		`{"workload":"fanin","variant":"default","params":{"senders":2,"duration_ms":20,`+
			`"mix":[{"percent":100,"kind":"message","size":10}],"method":"otp","memory_limit_mb":8192},"repetition":2}`),
		"default", "result")
	verify := last["verify"].(map[string]any)
	if verify["sent_message"].(float64) <= 0 || verify["received_message"] != verify["sent_message"] ||
		verify["receiver_alive"] != 1.0 {
		t.Fatalf("verify %v", verify)
	}
	if metrics := last["metrics"].(map[string]any); metrics["send_duration_ms"] != 20.0 {
		t.Fatalf("method otp reports the planned duration, got %v", metrics)
	}
}

// chatParams is a full set of small chat params, with override (a JSON
// member) replacing or adding one.
func chatParams(override string) string {
	members := map[string]string{
		"groups": "2", "clients_per_group": "3", "duration_s": "0.05", "think_ms": "0",
		"listener_delay_ms": "0", "message": `"text"`, "history": "10", "drain_timeout_s": "5",
	}
	var parts []string
	name, value, _ := strings.Cut(override, ":")
	if override != "" {
		members[strings.Trim(name, `"`)] = value
	}
	for _, key := range sortedKeys(members) {
		parts = append(parts, fmt.Sprintf("%q:%s", key, members[key]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestChatThroughTheProtocol(t *testing.T) {
	for _, variant := range []string{"default", "single_thread"} {
		for _, override := range []string{"", `"message":"binary"`, `"think_ms":10`} {
			t.Run(variant+"/"+override, func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
				last := expectHelloThen(t, serveLines(t, `{"workload":"chat","variant":"`+variant+`","params":`+
					chatParams(override)+`,"repetition":1}`), variant, "result")
				verify := last["verify"].(map[string]any)
				if verify["sent"].(float64) <= 0 || verify["received"] != verify["sent"] || verify["users"] != 6.0 ||
					verify["cross_group"] != 0.0 || verify["self_deliveries"] != 0.0 {
					t.Fatalf("verify %v", verify)
				}
				metrics := last["metrics"].(map[string]any)
				if metrics["processes_count"] != 14.0 || metrics["received_per_s"].(float64) <= 0 ||
					metrics["memory_per_user_bytes"] != metrics["peak_rss_bytes"].(float64)/6 {
					t.Fatalf("metrics %v", metrics)
				}
			})
		}
	}
}

// socketRequest is a small socket request; override (JSON members) replaces
// or adds params.
func socketRequest(variant, override string) string {
	members := map[string]string{
		"mode": `"echo"`, "size": "64", "total_bytes": "6400", "sockets": "2", "data": `"binary"`,
		"placement": `"local"`, "check_content": "1", "port": "0",
	}
	for _, member := range strings.Split(override, ",") {
		if name, value, ok := strings.Cut(member, ":"); ok {
			members[strings.Trim(name, `"`)] = value
		}
	}
	var parts []string
	for _, key := range sortedKeys(members) {
		parts = append(parts, fmt.Sprintf("%q:%s", key, members[key]))
	}
	return `{"workload":"socket","variant":"` + variant + `","params":{` + strings.Join(parts, ",") + `},"repetition":1}`
}

func TestSocketThroughTheProtocol(t *testing.T) {
	// Without the harness's environment the worker starts its own
	// executable (this test binary, see TestMain) as the server half.
	for _, env := range []string{"MSGBENCH_PEER_COMMAND", "MSGBENCH_PEER_CWD", "MSGBENCH_PEER_HOST"} {
		t.Setenv(env, "")
	}
	for _, variant := range []string{"default", "single_thread", "buffered_flow"} {
		for _, mode := range []string{"echo", "flow"} {
			t.Run(variant+"/"+mode, func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
				last := expectHelloThen(t, serveLines(t, socketRequest(variant, `"mode":"`+mode+`"`)), variant, "result")
				verify := last["verify"].(map[string]any)
				if verify["messages_sent"] != 200.0 || verify["messages_received"] != 200.0 ||
					verify["bytes_sent"] != 12800.0 || verify["bytes_received"] != 12800.0 ||
					verify["content_mismatches"] != 0.0 {
					t.Fatalf("verify %v", verify)
				}
				if metrics := last["metrics"].(map[string]any); metrics["bandwidth_bytes_per_s"].(float64) <= 0 {
					t.Fatalf("metrics %v", metrics)
				}
			})
		}
	}
}

func TestSharedPayloadVariant(t *testing.T) {
	expectHelloThen(t, serveLines(t,
		`{"workload":"fanin","variant":"shared_payload","params":{"senders":1,"duration_ms":10,`+
			`"mix":[{"percent":100,"kind":"message","size":100}],"method":"msgbench","memory_limit_mb":64},"repetition":1}`),
		"shared_payload", "result")
	expectError(t, `{"workload":"ring","variant":"shared_payload","params":{"n":10,"m":1,"payload":""},"repetition":1}`,
		"shared_payload", "unsupported", `does not implement workload "ring"`)
}

func TestSingleThreadVariantUsesOneThread(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	expectHelloThen(t, serveLines(t,
		`{"workload":"ring","variant":"single_thread","params":{"n":10,"m":2,"payload":"x"},"repetition":1}`),
		"single_thread", "result")
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS = %d, want 1", got)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name, request, variant, kind, want string
	}{
		{"unknown workload", `{"workload":"pubsub","variant":"default","params":{},"repetition":1}`,
			"default", "unsupported", `workload "pubsub" is not implemented by go`},
		{"chat in a fanin-only variant", `{"workload":"chat","variant":"shared_payload","params":{},"repetition":1}`,
			"shared_payload", "unsupported", `does not implement workload "chat"`},
		{"chat without a peer", `{"workload":"chat","variant":"default","params":` + chatParams(`"clients_per_group":1`) +
			`,"repetition":1}`, "default", "bad_params",
			"clients_per_group = 1 is out of range: clients_per_group must be an integer >= 2 and <= 100000 " +
				"(a user needs a peer in its group)"},
		{"chat unknown param", `{"workload":"chat","variant":"default","params":` + chatParams(`"rooms":3`) +
			`,"repetition":1}`, "default", "bad_params", "unknown parameter rooms"},
		{"unknown variant", `{"workload":"ring","variant":"tokio","params":{},"repetition":1}`,
			"tokio", "unsupported", `variant "tokio" is not a variant of go`},
		{"bad n", `{"workload":"ring","variant":"default","params":{"n":1,"m":10,"payload":"BOO!"},"repetition":1}`,
			"default", "bad_params", "n = 1 is out of range: n must be an integer >= 2"},
		{"unknown param", `{"workload":"ring","variant":"default","params":{"n":10,"m":10,"payload":"","x":1},"repetition":1}`,
			"default", "bad_params", "unknown parameter x"},
		{"exit signals", `{"workload":"fanin","variant":"default","params":{"senders":1,"duration_ms":10,` +
			`"mix":[{"percent":100,"kind":"exit_signal","size":1}],"method":"msgbench","memory_limit_mb":8192},"repetition":1}`,
			"default", "unsupported", "exit signals are an Erlang notion"},
		{"socket size above total_bytes", socketRequest("default", `"size":6401`), "default", "bad_params",
			"size = 6401 is out of range: size must not exceed total_bytes (6400)"},
		{"socket size 0", socketRequest("default", `"size":0`), "default", "bad_params",
			"size = 0 is out of range: size must be an integer >= 1 and <= 67108864"},
		{"socket lists", socketRequest("default", `"data":"list"`), "default", "unsupported", `data = "list"`},
		{"socket in a fanin-only variant", socketRequest("shared_payload", ""), "shared_payload", "unsupported",
			`does not implement workload "socket"`},
		{"not JSON", `ring please`, unknownVariant, "bad_params", "not a JSON object"},
		{"no params", `{"workload":"ring","variant":"default","repetition":1}`, "default", "bad_params", `"params"`},
		{"bad repetition", `{"workload":"ring","variant":"default","params":{},"repetition":0}`,
			"default", "bad_params", "repetition = 0"},
		{"unknown field", `{"workload":"ring","variant":"default","params":{},"repetition":1,"x":1}`,
			"default", "bad_params", `unknown field "x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectError(t, c.request, c.variant, c.kind, c.want)
		})
	}
}
