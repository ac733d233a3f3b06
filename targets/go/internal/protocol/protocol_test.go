package protocol

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestReadRequest(t *testing.T) {
	req, err := ReadRequest(strings.NewReader(
		`{"workload":"ring","variant":"default","params":{"n":1000,"payload":"BOO!"},"repetition":3}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if req.Workload != "ring" || req.Variant != "default" || req.Repetition != 3 || req.Params["payload"] != "BOO!" {
		t.Fatalf("request %+v", req)
	}
	if n := req.Params["n"]; n == nil || n.(interface{ String() string }).String() != "1000" {
		t.Fatalf("n decoded as %#v, want the exact number", n)
	}
}

func TestReadRequestKeepsTheVariantOfABadRequest(t *testing.T) {
	req, err := ReadRequest(strings.NewReader(`{"workload":"ring","variant":"single_thread","params":[]}`))
	var perr *Error
	if !errors.As(err, &perr) || perr.Kind != BadParams {
		t.Fatalf("error %v", err)
	}
	if req.Variant != "single_thread" {
		t.Fatalf("variant %q lost", req.Variant)
	}
}

func TestWriterLines(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	steps := []error{
		w.Hello("go", "go1.22", "default"),
		w.Progress(1, 2),
		w.Result(Result{Metrics: map[string]float64{"a_ms": 1.5}, Verify: map[string]int64{"hops": 3}}),
		w.Error(Errorf(Unsupported, "no <exit> signals")),
		w.Error(errors.New("boom")),
		w.Listening(40123),
		w.Served(12, 3072),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := `{"type":"hello","target":"go","runtime_version":"go1.22","variant":"default"}
{"type":"progress","done":1,"total":2}
{"type":"result","metrics":{"a_ms":1.5},"verify":{"hops":3}}
{"type":"error","kind":"unsupported","message":"no <exit> signals"}
{"type":"error","kind":"internal","message":"boom"}
{"type":"listening","port":40123}
{"type":"served","messages":12,"bytes":3072}
`
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}
