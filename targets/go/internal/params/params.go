// Package params validates workload parameters as decoded from the request
// (numbers as json.Number) and words every failure as the protocol asks:
// the parameter, the value it got, and the range it accepts.
package params

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"msgbench/targets/go/internal/protocol"
)

// Value is one parameter (or one field inside a parameter) and its label for
// messages, e.g. "n" or "mix[1].size".
type Value struct {
	Label   string
	Raw     any
	Present bool
}

// Get looks up key in obj; label names it in error messages.
func Get(obj map[string]any, key, label string) Value {
	raw, ok := obj[key]
	return Value{Label: label, Raw: raw, Present: ok}
}

// RejectUnknown fails on the first key of obj (in sorted order, so messages
// are stable) that is not in known. prefix qualifies the name, e.g. "mix[0].".
func RejectUnknown(obj map[string]any, prefix string, known ...string) error {
	keys := make([]string, 0, len(obj))
	for key := range obj {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if !contains(known, key) {
			return protocol.Errorf(protocol.BadParams, "unknown parameter %s%s: accepted are %s",
				prefix, key, strings.Join(known, ", "))
		}
	}
	return nil
}

// IntRange is an accepted range of integers, bounds included (as JSON
// Schema's minimum and maximum).
type IntRange struct {
	Min, Max int64
}

func (r IntRange) describe(label string) string {
	return fmt.Sprintf("%s must be an integer >= %d and <= %d", label, r.Min, r.Max)
}

// Int reads an integer in r. Like JSON Schema, 3.0 counts as the integer 3.
func (v Value) Int(r IntRange) (int64, error) {
	want := r.describe(v.Label)
	if !v.Present {
		return 0, v.missing(want)
	}
	num, ok := v.Raw.(json.Number)
	if !ok {
		return 0, v.invalid(want)
	}
	n, err := num.Int64()
	if err != nil { // not an int64 literal: 3.0, 1e3, or beyond int64
		f, ferr := num.Float64()
		switch {
		case ferr == nil && f != math.Trunc(f):
			return 0, v.invalid(want)
		case ferr == nil && math.Abs(f) <= 1<<53: // exact as a float
			n = int64(f)
		default: // an integer too large to hold
			return 0, v.outOfRange(want)
		}
	}
	if n < r.Min || n > r.Max {
		return 0, v.outOfRange(want)
	}
	return n, nil
}

// FloatRange is an accepted range of numbers; MinExclusive makes Min itself
// unacceptable (JSON Schema's exclusiveMinimum).
type FloatRange struct {
	Min, Max     float64
	MinExclusive bool
}

func (r FloatRange) describe(label string) string {
	lower := ">="
	if r.MinExclusive {
		lower = ">"
	}
	return fmt.Sprintf("%s must be a number %s %g and <= %g", label, lower, r.Min, r.Max)
}

// Float reads a number in r.
func (v Value) Float(r FloatRange) (float64, error) {
	want := r.describe(v.Label)
	if !v.Present {
		return 0, v.missing(want)
	}
	num, ok := v.Raw.(json.Number)
	if !ok {
		return 0, v.invalid(want)
	}
	f, err := num.Float64()
	if err != nil {
		return 0, v.invalid(want)
	}
	if f < r.Min || (r.MinExclusive && f == r.Min) || f > r.Max {
		return 0, v.outOfRange(want)
	}
	return f, nil
}

// StringLength is an accepted length of a string, in characters (as JSON
// Schema counts them), bounds included.
type StringLength struct {
	Min, Max int
}

// String reads a string whose length is in l.
func (v Value) String(l StringLength) (string, error) {
	want := fmt.Sprintf("%s must be a string of %d to %d characters", v.Label, l.Min, l.Max)
	if !v.Present {
		return "", v.missing(want)
	}
	s, ok := v.Raw.(string)
	if !ok {
		return "", v.invalid(want)
	}
	if n := utf8.RuneCountInString(s); n < l.Min || n > l.Max {
		// The value may be long: name its length rather than echo it.
		return "", protocol.Errorf(protocol.BadParams, "%s (a string of %d characters) is out of range: %s",
			v.Label, n, want)
	}
	return s, nil
}

// OneOf reads a string that must be one of choices.
func (v Value) OneOf(choices ...string) (string, error) {
	quoted := make([]string, len(choices))
	for i, c := range choices {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	want := fmt.Sprintf("%s must be one of %s", v.Label, strings.Join(quoted, ", "))
	if !v.Present {
		return "", v.missing(want)
	}
	s, ok := v.Raw.(string)
	if !ok || !contains(choices, s) {
		return "", v.invalid(want)
	}
	return s, nil
}

// ItemCount is an accepted number of items of an array, bounds included.
type ItemCount struct {
	Min, Max int
}

// Array reads an array whose length is in c.
func (v Value) Array(c ItemCount) ([]any, error) {
	want := fmt.Sprintf("%s must be an array of %d to %d items", v.Label, c.Min, c.Max)
	if !v.Present {
		return nil, v.missing(want)
	}
	items, ok := v.Raw.([]any)
	if !ok {
		return nil, v.invalid(want)
	}
	if len(items) < c.Min || len(items) > c.Max {
		return nil, protocol.Errorf(protocol.BadParams, "%s (an array of %d items) is out of range: %s",
			v.Label, len(items), want)
	}
	return items, nil
}

// Object reads an object with exactly the fields named in fields.
func (v Value) Object(fields ...string) (map[string]any, error) {
	want := fmt.Sprintf("%s must be an object with the fields %s", v.Label, strings.Join(fields, ", "))
	if !v.Present {
		return nil, v.missing(want)
	}
	obj, ok := v.Raw.(map[string]any)
	if !ok {
		return nil, v.invalid(want)
	}
	if err := RejectUnknown(obj, v.Label+".", fields...); err != nil {
		return nil, err
	}
	return obj, nil
}

func (v Value) missing(want string) error {
	return protocol.Errorf(protocol.BadParams, "%s is missing: %s", v.Label, want)
}

func (v Value) invalid(want string) error {
	return protocol.Errorf(protocol.BadParams, "%s = %s is not valid: %s", v.Label, render(v.Raw), want)
}

func (v Value) outOfRange(want string) error {
	return protocol.Errorf(protocol.BadParams, "%s = %s is out of range: %s", v.Label, render(v.Raw), want)
}

// render shows a value as JSON, the way the harness wrote it.
func render(raw any) string {
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Sprint(raw)
	}
	const limit = 80
	if len(b) > limit {
		return string(b[:limit]) + "..."
	}
	return string(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
