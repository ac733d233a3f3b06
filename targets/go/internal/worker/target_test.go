package worker

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tomlVariant is what this test reads of a [variants.*] table. The standard
// library has no TOML parser; the few lines needed are simple enough.
type tomlVariant struct {
	workloads []string
	env       string
}

func readTargetVariants(t *testing.T) map[string]*tomlVariant {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "target.toml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	variants := map[string]*tomlVariant{}
	var current *tomlVariant
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if name, ok := strings.CutPrefix(line, "[variants."); ok {
			current = &tomlVariant{}
			variants[strings.TrimSuffix(name, "]")] = current
			continue
		}
		if current == nil {
			continue
		}
		if list, ok := strings.CutPrefix(line, "workloads = "); ok {
			// A TOML array of double-quoted strings is a JSON array.
			if err := json.Unmarshal([]byte(list), &current.workloads); err != nil {
				t.Fatalf("workloads line %q: %v", line, err)
			}
		}
		if env, ok := strings.CutPrefix(line, "env = "); ok {
			current.env = env
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return variants
}

func TestTargetTomlDeclaresTheWorkersVariants(t *testing.T) {
	declared := readTargetVariants(t)
	for name, v := range Variants {
		d, ok := declared[name]
		if !ok {
			t.Errorf("variant %s missing from target.toml", name)
			continue
		}
		if !slices.Equal(d.workloads, v.Workloads) {
			t.Errorf("variant %s: target.toml lists %v, the worker implements %v", name, d.workloads, v.Workloads)
		}
		wantsOneThread := v.GOMAXPROCS == 1
		if setsOneThread := strings.Contains(d.env, `GOMAXPROCS = "1"`); setsOneThread != wantsOneThread {
			t.Errorf("variant %s: target.toml env %s, worker GOMAXPROCS %d", name, d.env, v.GOMAXPROCS)
		}
	}
	for name := range declared {
		if _, ok := Variants[name]; !ok {
			t.Errorf("target.toml declares variant %s the worker does not know", name)
		}
	}
}
