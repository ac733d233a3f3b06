// Package sample takes a worker's time series (spec/message.schema.json's
// sample lines): about once a second, from a goroutine of its own, outside
// the measured path, the first at t=0 and the last when the sampler stops.
// GoRuntime is the Go runtime's own view (runtime/metrics) plus RSS, which
// every Go program of msgbench reports the same way.
package sample

import (
	"math"
	"runtime/metrics"
	"sync"
	"time"

	"msgbench/kits/go/measure"
)

// Every is the interval between samples.
const Every = time.Second

// Writer is where samples go (protocol.Writer's Sample).
type Writer interface {
	Sample(tMS int64, values map[string]float64) error
}

// Sampler writes collect() to w every interval until Stop.
type Sampler struct {
	w        Writer
	collect  func() map[string]float64
	start    time.Time
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// Start writes the first sample now and then one every interval.
func Start(w Writer, interval time.Duration, collect func() map[string]float64) *Sampler {
	s := &Sampler{w: w, collect: collect, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	s.write()
	go s.loop(interval)
	return s
}

func (s *Sampler) loop(interval time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			s.write()
		case <-s.stop:
			return
		}
	}
}

func (s *Sampler) write() {
	// A sample that cannot be written (stdout gone) is not worth failing the
	// measurement for: the result line will say so.
	_ = s.w.Sample(time.Since(s.start).Milliseconds(), s.collect())
}

// Stop ends the loop and writes the last sample. Safe to call more than once.
func (s *Sampler) Stop() {
	s.stopOnce.Do(func() {
		close(s.stop)
		<-s.done
		s.write()
	})
}

// runtime/metrics names and the sample names they are reported as.
var goMetrics = [][2]string{
	{"/memory/classes/total:bytes", "go_total_bytes"},
	{"/memory/classes/heap/objects:bytes", "go_heap_objects_bytes"},
	{"/memory/classes/heap/unused:bytes", "go_heap_unused_bytes"},
	{"/memory/classes/heap/stacks:bytes", "go_stacks_bytes"},
	{"/memory/classes/heap/released:bytes", "go_heap_released_bytes"},
	{"/gc/cycles/total:gc-cycles", "go_gc_cycles_count"},
	{"/gc/heap/allocs:bytes", "go_allocated_bytes"},
	{"/sched/goroutines:goroutines", "go_goroutines_count"},
}

// GoRuntime is the Go runtime's view of this process (runtime/metrics: memory
// by class, GC cycles, bytes allocated, goroutines, the total GC pause time)
// with its RSS and peak RSS. Nothing here stops the world: it runs beside a
// measurement, about once a second.
func GoRuntime() map[string]float64 {
	samples := make([]metrics.Sample, len(goMetrics))
	for i, m := range goMetrics {
		samples[i].Name = m[0]
	}
	metrics.Read(samples)
	values := make(map[string]float64, len(goMetrics)+3)
	for i, m := range goMetrics {
		switch samples[i].Value.Kind() {
		case metrics.KindUint64:
			values[m[1]] = float64(samples[i].Value.Uint64())
		case metrics.KindFloat64:
			values[m[1]] = samples[i].Value.Float64()
		}
	}
	values["go_gc_pause_total_ns"] = gcPauseTotalNs()
	if rss, err := measure.RSSBytes(); err == nil {
		values["rss_bytes"] = float64(rss)
	}
	if peak, err := measure.PeakRSSBytes(); err == nil {
		values["peak_rss_bytes"] = float64(peak)
	}
	return values
}

// gcPauseTotalNs is the total time GC stopped the world, summed from the
// runtime's pause histogram (each pause counted at its bucket's midpoint)
// rather than from runtime.ReadMemStats, which would stop the world itself.
func gcPauseTotalNs() float64 {
	pauses := []metrics.Sample{{Name: "/sched/pauses/total/gc:seconds"}}
	metrics.Read(pauses)
	if pauses[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := pauses[0].Value.Float64Histogram()
	total := 0.0
	for i, count := range h.Counts {
		low, high := h.Buckets[i], h.Buckets[i+1]
		switch {
		case math.IsInf(low, -1):
			low = high
		case math.IsInf(high, 1):
			high = low
		}
		total += float64(count) * (low + high) / 2
	}
	return total * 1e9
}
