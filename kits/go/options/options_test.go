package options

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestOptionsFromARequest(t *testing.T) {
	var o Options
	if err := json.Unmarshal([]byte(`{"yield": true, "qos": 1, "label": "x"}`), &o); err != nil {
		t.Fatal(err)
	}
	if b, err := o.Bool("yield"); err != nil || !b {
		t.Errorf("yield = %v, %v", b, err)
	}
	if q, err := o.Int("qos", 0); err != nil || q != 1 {
		t.Errorf("qos = %v, %v", q, err)
	}
	if b, err := o.Bool("absent"); err != nil || b {
		t.Errorf("an absent boolean = %v, %v", b, err)
	}
	if n, err := o.Int("absent", 7); err != nil || n != 7 {
		t.Errorf("an absent integer = %v, %v", n, err)
	}
	if _, err := o.Bool("qos"); err == nil {
		t.Error("a number taken as a boolean")
	}
	if _, err := (Options{"qos": 1.5}).Int("qos", 0); err == nil {
		t.Error("1.5 taken as an integer")
	}
}

func TestUnknownOptionsAreNamedSorted(t *testing.T) {
	err := Options{"yield": true, "turbo": 1, "colour": "red"}.Unknown("yield")
	if err == nil || !strings.Contains(err.Error(), "unknown option colour, turbo") {
		t.Fatalf("got %v", err)
	}
	if err := (Options{"yield": true}).Unknown("yield"); err != nil {
		t.Fatal(err)
	}
}
