package params

import (
	"encoding/json"
	"strings"
	"testing"

	"msgbench/targets/go/internal/protocol"
)

func value(raw any) Value { return Value{Label: "x", Raw: raw, Present: true} }

func expectBadParams(t *testing.T, err error, want string) {
	t.Helper()
	perr, ok := err.(*protocol.Error)
	if !ok || perr.Kind != protocol.BadParams || !strings.Contains(perr.Message, want) {
		t.Fatalf("error = %v; want bad_params containing %q", err, want)
	}
}

func TestInt(t *testing.T) {
	r := IntRange{Min: 2, Max: 10}
	for raw, want := range map[string]int64{"2": 2, "10": 10, "4.0": 4, "5e0": 5} {
		if got, err := value(json.Number(raw)).Int(r); err != nil || got != want {
			t.Errorf("%s: got %d, %v", raw, got, err)
		}
	}
	_, err := value(json.Number("1")).Int(r)
	expectBadParams(t, err, "x = 1 is out of range: x must be an integer >= 2 and <= 10")
	_, err = value(json.Number("99999999999999999999")).Int(r)
	expectBadParams(t, err, "is out of range")
	_, err = value(json.Number("2.5")).Int(r)
	expectBadParams(t, err, "x = 2.5 is not valid")
	_, err = value(true).Int(r)
	expectBadParams(t, err, "x = true is not valid")
	_, err = value(nil).Int(r)
	expectBadParams(t, err, "x = null is not valid")
	_, err = Get(map[string]any{}, "n", "n").Int(r)
	expectBadParams(t, err, "n is missing: n must be an integer >= 2 and <= 10")
}

func TestFloat(t *testing.T) {
	r := FloatRange{Min: 0, Max: 100, MinExclusive: true}
	if got, err := value(json.Number("0.5")).Float(r); err != nil || got != 0.5 {
		t.Fatalf("got %v, %v", got, err)
	}
	_, err := value(json.Number("0")).Float(r)
	expectBadParams(t, err, "x = 0 is out of range: x must be a number > 0 and <= 100")
	_, err = value(json.Number("100.5")).Float(r)
	expectBadParams(t, err, "out of range")
	_, err = value("5").Float(r)
	expectBadParams(t, err, `x = "5" is not valid`)
}

func TestString(t *testing.T) {
	l := StringLength{Min: 0, Max: 3}
	if got, err := value("héé").String(l); err != nil || got != "héé" {
		t.Fatalf("three characters in five bytes: got %q, %v", got, err)
	}
	_, err := value("four").String(l)
	expectBadParams(t, err, "x (a string of 4 characters) is out of range")
	_, err = value(json.Number("1")).String(l)
	expectBadParams(t, err, "x = 1 is not valid: x must be a string of 0 to 3 characters")
}

func TestOneOfArrayObject(t *testing.T) {
	if got, err := value("otp").OneOf("msgbench", "otp"); err != nil || got != "otp" {
		t.Fatalf("got %q, %v", got, err)
	}
	_, err := value("OTP").OneOf("msgbench", "otp")
	expectBadParams(t, err, `x = "OTP" is not valid: x must be one of "msgbench", "otp"`)

	_, err = value([]any{1, 2, 3}).Array(ItemCount{Min: 1, Max: 2})
	expectBadParams(t, err, "x (an array of 3 items) is out of range")

	_, err = value(map[string]any{"a": 1, "b": 2}).Object("a")
	expectBadParams(t, err, "unknown parameter x.b: accepted are a")
	_, err = value([]any{}).Object("a")
	expectBadParams(t, err, "x = [] is not valid: x must be an object")
}

func TestRejectUnknownNamesTheFirstSorted(t *testing.T) {
	err := RejectUnknown(map[string]any{"n": 1, "zz": 1, "aa": 1}, "", "n")
	expectBadParams(t, err, "unknown parameter aa")
	if err := RejectUnknown(map[string]any{"n": 1}, "", "n", "m"); err != nil {
		t.Fatal(err)
	}
}
