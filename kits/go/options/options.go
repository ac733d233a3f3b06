// Package options reads a variant's options, as the worker request carries
// them (spec/request.schema.json: target.toml's options table). Every Go
// worker (targets/go, the pubsub kit) reads them the same way: a setting it
// does not know is an error naming it, never silently ignored, since a worker
// that ignored one would measure something else than its variant says.
package options

import (
	"fmt"
	"slices"
	"strings"
)

// Options are option name -> value: a string, a number (float64 when decoded
// from JSON, int in a Go literal) or a boolean.
type Options map[string]any

// Bool is a boolean option; false when the variant does not set it.
func (o Options) Bool(name string) (bool, error) {
	v, ok := o[name]
	if !ok {
		return false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, fmt.Errorf("option %s = %v: expected true or false", name, v)
	}
	return b, nil
}

// Int is an integer option; def when the variant does not set it.
func (o Options) Int(name string, def int) (int, error) {
	v, ok := o[name]
	if !ok {
		return def, nil
	}
	switch n := v.(type) {
	case int:
		return n, nil
	case float64:
		if n == float64(int(n)) {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("option %s = %v: expected an integer", name, v)
}

// Unknown is an error naming the options not in known, or nil.
func (o Options) Unknown(known ...string) error {
	var unknown []string
	for name := range o {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("unknown option %s (known here: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
}
