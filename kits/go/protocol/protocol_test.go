package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestReadRequest(t *testing.T) {
	req, err := ReadRequest(strings.NewReader(`{"workload":"ring","variant":"default","options":{"yield":true},` +
		`"params":{"n":1000,"payload":"BOO!"},"repetition":3,"warmup":true}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if req.Workload != "ring" || req.Variant != "default" || req.Repetition != 3 || !req.Warmup {
		t.Fatalf("request %+v", req)
	}
	var p struct {
		N       int64  `json:"n"`
		Payload string `json:"payload"`
	}
	if err := req.DecodeParams(&p); err != nil || p.N != 1000 || p.Payload != "BOO!" {
		t.Fatalf("params %+v, %v", p, err)
	}
	if yield, err := req.Options.Bool("yield"); err != nil || !yield {
		t.Fatalf("option yield = %v, %v", yield, err)
	}
}

func TestParamsTheWorkerCannotDecodeAreInternal(t *testing.T) {
	req, _ := ReadRequest(strings.NewReader(`{"workload":"ring","params":{"n":"many","extra":1}}`))
	var p struct {
		N int64 `json:"n"`
	}
	var perr *Error
	if err := req.DecodeParams(&p); !errors.As(err, &perr) || perr.Kind != Internal {
		t.Fatalf("error %v", err)
	}
}

func TestUnknownOptionsAreNamed(t *testing.T) {
	opts := Options{"yield": true, "turbo": 1, "colour": "red"}
	err := opts.Unknown("yield")
	if err == nil || !strings.Contains(err.Error(), "unknown option colour, turbo") {
		t.Fatalf("error %v", err)
	}
	if err := (Options{"yield": true}).Unknown("yield"); err != nil {
		t.Fatal(err)
	}
	if _, err := (Options{"yield": "yes"}).Bool("yield"); err == nil {
		t.Fatal("a string taken as a boolean option")
	}
}

func TestWriterLines(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	steps := []error{
		w.Hello("go", "go1.22", "default"),
		w.Progress(1, 2),
		w.Result(Result{Measured: map[string]any{"pass_wall_ns": int64(1500)}, Verify: map[string]int64{"hops": 3},
			Histograms: map[string][][2]int64{"latency_ns": {{130, 2}}}}),
		w.Error(Errorf(Unsupported, "no <exit> signals")),
		w.Error(errors.New("boom")),
		w.Line(struct {
			Type string `json:"type"`
			Port int    `json:"port"`
		}{"listening", 40123}),
		w.Line(map[string]any{"type": "published", "counts": []int64{3, 4}}),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := `{"type":"hello","target":"go","runtime_version":"go1.22","variant":"default"}
{"type":"progress","done":1,"total":2}
{"type":"result","measured":{"pass_wall_ns":1500},"verify":{"hops":3},"histograms":{"latency_ns":[[130,2]]}}
{"type":"error","kind":"unsupported","message":"no <exit> signals"}
{"type":"error","kind":"internal","message":"boom"}
{"type":"listening","port":40123}
{"counts":[3,4],"type":"published"}
`
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestReadRequestKeepsTheVariantOfABadRequest(t *testing.T) {
	req, err := ReadRequest(strings.NewReader(`{"workload":"ring","variant":"fast","repetition":"one"}`))
	var perr *Error
	if !errors.As(err, &perr) || perr.Kind != Internal || !strings.Contains(perr.Message, "cannot decode the request") {
		t.Fatalf("error %v", err)
	}
	if req.Variant != "fast" {
		t.Fatalf("variant %q, want the one that decoded", req.Variant)
	}
	if _, err := ReadRequest(strings.NewReader("")); err == nil {
		t.Fatal("an empty stdin decoded")
	}
}

func TestClassify(t *testing.T) {
	own := Errorf(Unsupported, "no such thing")
	if got := Classify(fmt.Errorf("context: %w", own), Resource); got != own {
		t.Fatalf("a wrapped *Error became %v", got)
	}
	if got := Classify(errors.New("connection refused"), Resource); got.Kind != Resource ||
		got.Message != "connection refused" {
		t.Fatalf("got %v", got)
	}
	for _, k := range []ErrorKind{Unsupported, Resource, Internal} {
		if !k.Known() {
			t.Errorf("%s not known", k)
		}
	}
	if ErrorKind("bad_params").Known() {
		t.Error("bad_params is the harness's, not a worker's")
	}
}

// Lines written from many goroutines at once come out whole, one per line.
func TestWriterIsSafeFromManyGoroutines(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_ = w.Line(map[string]any{"type": "progress", "g": g, "pad": strings.Repeat("x", 1000)})
			}
		}(g)
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200)
	}
	for _, line := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil || v["type"] != "progress" {
			t.Fatalf("a torn line %.80q", line)
		}
	}
}
