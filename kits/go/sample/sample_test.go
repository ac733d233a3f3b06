package sample

import (
	"regexp"
	"sync"
	"testing"
	"time"
)

type recorder struct {
	mu    sync.Mutex
	times []int64
}

func (r *recorder) Sample(tMS int64, _ map[string]float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.times = append(r.times, tMS)
	return nil
}

func TestSamplerWritesTheFirstAtOnceAndTheLastOnStop(t *testing.T) {
	r := &recorder{}
	s := Start(r, 10*time.Millisecond, func() map[string]float64 { return nil })
	time.Sleep(35 * time.Millisecond)
	s.Stop()
	s.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.times) < 3 || r.times[0] > 5 {
		t.Fatalf("want a sample at t~0, some in between and one at the stop, got %v", r.times)
	}
	for i := 1; i < len(r.times); i++ {
		if r.times[i] < r.times[i-1] {
			t.Fatalf("times go back: %v", r.times)
		}
	}
}

var unitName = regexp.MustCompile(`^[a-z][a-z0-9_]*_(bytes|count|ns|ms|percent|per_s)$`)

func TestGoRuntimeNamesCarryUnitsAndSeeTheHeap(t *testing.T) {
	v := GoRuntime()
	for name := range v {
		if !unitName.MatchString(name) {
			t.Errorf("%s has no unit suffix", name)
		}
	}
	for _, want := range []string{"go_total_bytes", "go_heap_objects_bytes", "go_goroutines_count", "rss_bytes", "peak_rss_bytes", "go_gc_pause_total_ns"} {
		if v[want] <= 0 && want != "go_gc_pause_total_ns" {
			t.Errorf("%s = %v, want > 0", want, v[want])
		}
		if _, ok := v[want]; !ok {
			t.Errorf("%s missing", want)
		}
	}
}
