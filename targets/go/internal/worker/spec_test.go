package worker

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"msgbench/targets/go/internal/chat"
	"msgbench/targets/go/internal/fanin"
	"msgbench/targets/go/internal/params"
	"msgbench/targets/go/internal/protocol"
	"msgbench/targets/go/internal/ring"
	"msgbench/targets/go/internal/socket"
)

// The workload specs are the single source of truth; these tests keep the
// worker's copies of their ranges and names in step with them.

type paramSpec struct {
	Minimum          *json.Number `json:"minimum"`
	Maximum          *json.Number `json:"maximum"`
	ExclusiveMinimum *json.Number `json:"exclusiveMinimum"`
	MinLength        *int         `json:"minLength"`
	MaxLength        *int         `json:"maxLength"`
	MinItems         *int         `json:"minItems"`
	MaxItems         *int         `json:"maxItems"`
	Enum             []string     `json:"enum"`
	Default          any          `json:"default"`
	Items            struct {
		Properties map[string]paramSpec `json:"properties"`
	} `json:"items"`
}

type workloadSpec struct {
	Params  map[string]paramSpec    `json:"params"`
	Metrics map[string]any          `json:"metrics"`
	Verify  []struct{ Rule string } `json:"verify"`
}

func loadSpec(t *testing.T, workload string) workloadSpec {
	t.Helper()
	// internal/worker -> the repository's spec/ folder.
	path := filepath.Join("..", "..", "..", "..", "spec", "workloads", workload+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the spec: %v", err)
	}
	var spec workloadSpec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&spec); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return spec
}

func intOf(t *testing.T, n *json.Number) int64 {
	t.Helper()
	if n == nil {
		t.Fatal("bound missing in the spec")
	}
	v, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func floatOf(t *testing.T, n *json.Number) float64 {
	t.Helper()
	if n == nil {
		t.Fatal("bound missing in the spec")
	}
	v, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func checkIntRange(t *testing.T, name string, spec paramSpec, got params.IntRange) {
	t.Helper()
	want := params.IntRange{Min: intOf(t, spec.Minimum), Max: intOf(t, spec.Maximum)}
	if got != want {
		t.Errorf("%s: worker accepts %+v, spec says %+v", name, got, want)
	}
}

func defaults(spec workloadSpec) map[string]any {
	out := map[string]any{}
	for name, p := range spec.Params {
		out[name] = p.Default
	}
	return out
}

func TestRingMatchesSpec(t *testing.T) {
	spec := loadSpec(t, "ring")
	checkIntRange(t, "n", spec.Params["n"], ring.NRange)
	checkIntRange(t, "m", spec.Params["m"], ring.MRange)
	payload := spec.Params["payload"]
	if want := (params.StringLength{Min: *payload.MinLength, Max: *payload.MaxLength}); ring.PayloadLength != want {
		t.Errorf("payload: worker accepts %+v, spec says %+v", ring.PayloadLength, want)
	}
	if _, err := ring.ParseParams(defaults(spec)); err != nil {
		t.Errorf("the spec's defaults are rejected: %v", err)
	}
	small := defaults(spec)
	small["n"], small["m"] = json.Number("5"), json.Number("2")
	result, err := ring.Measure(small, ringInbox)
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, spec, result.Metrics, result.Verify)
}

func TestFaninMatchesSpec(t *testing.T) {
	spec := loadSpec(t, "fanin")
	checkIntRange(t, "senders", spec.Params["senders"], fanin.SendersRange)
	checkIntRange(t, "duration_ms", spec.Params["duration_ms"], fanin.DurationRange)
	checkIntRange(t, "memory_limit_mb", spec.Params["memory_limit_mb"], fanin.MemoryLimitRange)
	mix := spec.Params["mix"]
	if want := (params.ItemCount{Min: *mix.MinItems, Max: *mix.MaxItems}); fanin.MixItems != want {
		t.Errorf("mix: worker accepts %+v, spec says %+v", fanin.MixItems, want)
	}
	props := mix.Items.Properties
	checkIntRange(t, "mix[].size", props["size"], fanin.SizeRange)
	percent := props["percent"]
	if want := (params.FloatRange{Min: floatOf(t, percent.ExclusiveMinimum), Max: floatOf(t, percent.Maximum),
		MinExclusive: true}); fanin.PercentRange != want {
		t.Errorf("mix[].percent: worker accepts %+v, spec says %+v", fanin.PercentRange, want)
	}
	for _, kind := range props["kind"].Enum {
		found := false
		for k := fanin.Kind(0); k <= fanin.ExitSignal; k++ {
			found = found || k.String() == kind
		}
		if !found {
			t.Errorf("mix[].kind %q unknown to the worker", kind)
		}
	}
	if !slices.Equal(spec.Params["method"].Enum, fanin.Methods) {
		t.Errorf("method: worker accepts %v, spec says %v", fanin.Methods, spec.Params["method"].Enum)
	}
	small := defaults(spec)
	if _, err := fanin.ParseParams(small); err != nil {
		t.Errorf("the spec's defaults are rejected: %v", err)
	}
	small["duration_ms"] = json.Number("10")
	result, err := fanin.Measure(small, faninChannel)
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, spec, result.Metrics, result.Verify)
}

func TestChatMatchesSpec(t *testing.T) {
	spec := loadSpec(t, "chat")
	checkIntRange(t, "groups", spec.Params["groups"], chat.GroupsRange)
	checkIntRange(t, "clients_per_group", spec.Params["clients_per_group"], chat.ClientsPerGroupRange)
	checkIntRange(t, "think_ms", spec.Params["think_ms"], chat.ThinkRange)
	checkIntRange(t, "listener_delay_ms", spec.Params["listener_delay_ms"], chat.ListenerDelayRange)
	checkIntRange(t, "history", spec.Params["history"], chat.HistoryRange)
	duration := spec.Params["duration_s"]
	if want := (params.FloatRange{Min: floatOf(t, duration.ExclusiveMinimum), Max: floatOf(t, duration.Maximum),
		MinExclusive: true}); chat.DurationRange != want {
		t.Errorf("duration_s: worker accepts %+v, spec says %+v", chat.DurationRange, want)
	}
	drain := spec.Params["drain_timeout_s"]
	if want := (params.FloatRange{Min: floatOf(t, drain.Minimum), Max: floatOf(t, drain.Maximum)}); chat.DrainTimeoutRange != want {
		t.Errorf("drain_timeout_s: worker accepts %+v, spec says %+v", chat.DrainTimeoutRange, want)
	}
	if !slices.Equal(spec.Params["message"].Enum, chat.Messages) {
		t.Errorf("message: worker accepts %v, spec says %v", chat.Messages, spec.Params["message"].Enum)
	}
	small := defaults(spec)
	if _, err := chat.ParseParams(small); err != nil {
		t.Errorf("the spec's defaults are rejected: %v", err)
	}
	small["duration_s"] = json.Number("0.05")
	result, err := chat.Measure(small, chatChannels)
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, spec, result.Metrics, result.Verify)
}

func TestSocketMatchesSpec(t *testing.T) {
	spec := loadSpec(t, "socket")
	checkIntRange(t, "size", spec.Params["size"], socket.SizeRange)
	checkIntRange(t, "total_bytes", spec.Params["total_bytes"], socket.TotalBytesRange)
	checkIntRange(t, "sockets", spec.Params["sockets"], socket.SocketsRange)
	checkIntRange(t, "check_content", spec.Params["check_content"], socket.CheckContentRange)
	checkIntRange(t, "port", spec.Params["port"], socket.PortRange)
	for name, accepted := range map[string][]string{
		"mode": socket.Modes, "data": socket.DataTypes, "placement": socket.Placements,
	} {
		if !slices.Equal(spec.Params[name].Enum, accepted) {
			t.Errorf("%s: worker accepts %v, spec says %v", name, accepted, spec.Params[name].Enum)
		}
	}
	small := defaults(spec)
	if _, err := socket.ParseParams(small); err != nil {
		t.Errorf("the spec's defaults are rejected: %v", err)
	}
	small["total_bytes"] = json.Number("10240")
	for _, mode := range socket.Modes {
		small["mode"] = mode
		result, err := socket.Measure(protocol.Request{Workload: "socket", Variant: "default", Params: small,
			Repetition: 1}, Variants["default"].Socket)
		if err != nil {
			t.Fatal(err)
		}
		checkNames(t, spec, result.Metrics, result.Verify)
	}
}

// checkNames compares the reported names with the spec: every metric, and
// every name the verify rules use that is not a parameter.
func checkNames(t *testing.T, spec workloadSpec, metrics map[string]float64, verify map[string]int64) {
	t.Helper()
	for name := range spec.Metrics {
		if _, ok := metrics[name]; !ok {
			t.Errorf("metric %s missing", name)
		}
	}
	for name := range metrics {
		if _, ok := spec.Metrics[name]; !ok {
			t.Errorf("metric %s is not in the spec", name)
		}
	}
	identifier := regexp.MustCompile(`[a-z_][a-z0-9_]*`)
	used := map[string]bool{}
	for _, rule := range spec.Verify {
		for _, name := range identifier.FindAllString(rule.Rule, -1) {
			if _, isParam := spec.Params[name]; !isParam {
				used[name] = true
			}
		}
	}
	for name := range used {
		if _, ok := verify[name]; !ok {
			t.Errorf("verify %s missing", name)
		}
	}
	for name := range verify {
		if !used[name] {
			t.Errorf("verify %s is not used by the spec's rules", name)
		}
	}
}
