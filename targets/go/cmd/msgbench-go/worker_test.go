// The go worker's workloads through the protocol, in process (goWorker.Run).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"

	"msgbench/kits/go/worker"
)

// serveLines runs the worker on request and decodes every stdout line.
func serveLines(t *testing.T, request string) []map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := goWorker.Run(strings.NewReader(request), &out); err != nil {
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
// must be of the given type. Sample lines in between (the chat workload's
// time series) are checked for their shape and left out.
func expectHelloThen(t *testing.T, lines []map[string]any, variant, lastType string) map[string]any {
	t.Helper()
	lines = withoutSamples(t, lines)
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
	measured := last["measured"].(map[string]any)
	if measured["pass_wall_ns"].(float64) <= 0 || measured["peak_rss_bytes"].(float64) <= 0 {
		t.Fatalf("measured %v", measured)
	}
	if _, computed := last["metrics"]; computed {
		t.Fatal("the worker computed metrics: the harness derives them")
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
	measured := last["measured"].(map[string]any)
	if measured["send_ns"].(float64) < 20e6 || measured["receive_ns"].(float64) < measured["send_ns"].(float64) {
		t.Fatalf("the raw times of a 20 ms run: %v", measured)
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
				measured := last["measured"].(map[string]any)
				if measured["processes_count"] != 14.0 || measured["received_in_window"].(float64) <= 0 ||
					measured["send_window_ns"].(float64) <= 0 {
					t.Fatalf("measured %v", measured)
				}
				latency := last["histograms"].(map[string]any)["latency_ns"].([]any)
				var counted float64
				for _, pair := range latency {
					counted += pair.([]any)[1].(float64)
				}
				if counted != verify["received"] {
					t.Fatalf("the latency histogram counts %v deliveries, verify %v", counted, verify["received"])
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
	return `{"workload":"socket","variant":"` + variant + `","options":` + options[variant] + `,"params":{` +
		strings.Join(parts, ",") + `},"repetition":1}`
}

// options are the variants' options as target.toml sets them.
var options = map[string]string{"default": "{}", "single_thread": "{}", "buffered_flow": `{"buffered_flow":true}`,
	"shared_payload": `{"share_payload":true}`, "yield": `{"yield":true}`}

func TestSocketThroughTheProtocol(t *testing.T) {
	// Without the harness's environment the worker starts its own
	// executable (this test binary, see TestMain) as the server half.
	for _, env := range []string{"MSGBENCH_PEER_COMMAND", "MSGBENCH_PEER_CWD", "MSGBENCH_PEER_HOST"} {
		t.Setenv(env, "")
	}
	for _, variant := range []string{"default", "buffered_flow"} {
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
				measured := last["measured"].(map[string]any)
				if elapsed := measured["elapsed_ns"].([]any); len(elapsed) != 2 || measured["wall_ns"].(float64) <= 0 {
					t.Fatalf("measured %v", measured)
				}
			})
		}
	}
	for _, variant := range []string{"default", "single_thread"} {
		t.Run(variant+"/echo/rate", func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			last := expectHelloThen(t, serveLines(t, socketRequest(variant, `"mode":"echo","rate":20000`)), variant, "result")
			if verify := last["verify"].(map[string]any); verify["messages_received"] != 200.0 {
				t.Fatalf("verify %v", verify)
			}
			counted := 0.0
			for _, pair := range last["histograms"].(map[string]any)["latency_ns"].([]any) {
				counted += pair.([]any)[1].(float64)
			}
			if measured := last["measured"].(map[string]any); counted != 200 || measured["latency_max_ns"].(float64) <= 0 {
				t.Fatalf("%v latencies, measured %v", counted, measured)
			}
		})
	}
}

// withoutSamples drops the sample lines, each of which must come between the
// first and the last line and carry the Go runtime's view.
func withoutSamples(t *testing.T, lines []map[string]any) []map[string]any {
	t.Helper()
	var kept []map[string]any
	for i, line := range lines {
		if line["type"] != "sample" {
			kept = append(kept, line)
			continue
		}
		values, ok := line["values"].(map[string]any)
		if i == 0 || i == len(lines)-1 || !ok || values["go_heap_objects_bytes"] == nil || values["rss_bytes"] == nil {
			t.Fatalf("sample line %d of %d: %v", i, len(lines), line)
		}
	}
	return kept
}

func TestChatSamplesTheRuntimeFromTheStartToTheEnd(t *testing.T) {
	lines := serveLines(t, `{"workload":"chat","variant":"default","options":{},"params":`+chatParams("")+`,"repetition":1}`)
	if len(lines) < 4 || lines[1]["type"] != "sample" || lines[len(lines)-2]["type"] != "sample" {
		t.Fatalf("want hello, a sample at the start, one at the end and the result, got %d lines", len(lines))
	}
	ring := serveLines(t, `{"workload":"ring","variant":"default","options":{},"params":{"n":10,"m":1,"payload":"BOO!"},"repetition":1}`)
	if len(ring) != 2 {
		t.Fatalf("ring: want no samples, got %d lines", len(ring))
	}
}

func TestVariantsAreOptions(t *testing.T) {
	expectHelloThen(t, serveLines(t,
		`{"workload":"fanin","variant":"shared_payload","options":{"share_payload":true},"params":{"senders":1,`+
			`"duration_ms":10,"mix":[{"percent":100,"kind":"message","size":100}],"method":"msgbench",`+
			`"memory_limit_mb":64},"repetition":1}`),
		"shared_payload", "result")
	expectHelloThen(t, serveLines(t, `{"workload":"chat","variant":"yield","options":{"yield":true},"params":`+
		chatParams("")+`,"repetition":1}`), "yield", "result")
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name, request, variant, kind, want string
	}{
		{"unknown workload", `{"workload":"pubsub","variant":"default","params":{},"repetition":1}`,
			"default", "unsupported", `workload "pubsub" is not implemented by go`},
		{"an option the workload does not know", `{"workload":"ring","variant":"turbo","options":{"turbo":true},` +
			`"params":{"n":10,"m":1,"payload":""},"repetition":1}`, "turbo", "internal", "unknown option turbo"},
		{"an option of another workload", `{"workload":"ring","variant":"shared_payload",` +
			`"options":{"share_payload":true},"params":{"n":10,"m":1,"payload":""},"repetition":1}`,
			"shared_payload", "internal", "unknown option share_payload"},
		{"a param the worker does not know", `{"workload":"ring","variant":"default","params":{"n":10,"m":10,` +
			`"payload":"","x":1},"repetition":1}`, "default", "internal", `unknown field "x"`},
		{"exit signals", `{"workload":"fanin","variant":"default","params":{"senders":1,"duration_ms":10,` +
			`"mix":[{"percent":100,"kind":"exit_signal","size":1}],"method":"msgbench","memory_limit_mb":8192},"repetition":1}`,
			"default", "unsupported", "exit signals are an Erlang notion"},
		{"socket lists", socketRequest("default", `"data":"list"`), "default", "unsupported", `data = "list"`},
		{"not JSON", `ring please`, worker.UnknownVariant, "internal", "cannot decode the request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectError(t, c.request, c.variant, c.kind, c.want)
		})
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
