package chat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBucketsCoverEveryValueWithinOnePercent(t *testing.T) {
	values := []int64{0, 1, 63, 64, 65, 127, 128, 129, 1000, 4095, 4096, 123456789, math.MaxInt64}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		values = append(values, rng.Int64N(1<<uint(rng.IntN(63))+1))
	}
	for _, v := range values {
		octave, index := bucket(v)
		if octave < 0 || octave >= octaveCount || index < 0 || index >= subBuckets {
			t.Fatalf("%d: octave %d, index %d", v, octave, index)
		}
		lower, width := bounds(octave, index)
		if v < lower || v-lower >= width {
			t.Fatalf("%d outside its bucket [%d, %d+%d)", v, lower, lower, width)
		}
		mid := lower + (width-1)/2
		if v > 0 && math.Abs(float64(mid-v))/float64(v) > 0.01 {
			t.Fatalf("%d: midpoint %d is %.2f%% off", v, mid, 100*math.Abs(float64(mid-v))/float64(v))
		}
	}
}

// exactQuantile is the nearest-rank quantile of sorted values.
func exactQuantile(sorted []int64, q float64) int64 {
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func TestQuantilesWithinOnePercentAfterMerging(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var all []int64
	clients := make([]Histogram, 50)
	for i := range clients {
		// Some clients see a few latencies (kept exactly), some many.
		n := 1 + rng.IntN(5)
		if i%3 == 0 {
			n = 2000
		}
		for range n {
			v := int64(math.Exp(rng.NormFloat64()*2 + 10)) // ~ 22 us, spread over decades
			clients[i].Record(v)
			all = append(all, v)
		}
	}
	var merged Histogram
	for i := range clients {
		merged.Merge(&clients[i])
	}
	slices.Sort(all)
	if merged.Count() != uint64(len(all)) || merged.Max() != all[len(all)-1] {
		t.Fatalf("count %d max %d; want %d, %d", merged.Count(), merged.Max(), len(all), all[len(all)-1])
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999, 1} {
		got, want := merged.Quantile(q), exactQuantile(all, q)
		if math.Abs(float64(got-want))/float64(want) > 0.01 {
			t.Errorf("q%.3f: %d, exact %d", q, got, want)
		}
	}
}

func TestFewSamplesAreExact(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Max() != 0 {
		t.Fatal("empty histogram")
	}
	for _, v := range []int64{70001, 30003, 50005, -5} {
		h.Record(v)
	}
	if h.octaves != nil {
		t.Fatal("four samples allocated buckets")
	}
	if h.Quantile(0.5) != 30003 || h.Quantile(0.99) != 70001 || h.Quantile(0.25) != 0 || h.Max() != 70001 {
		t.Fatalf("p50 %d p99 %d p25 %d max %d", h.Quantile(0.5), h.Quantile(0.99), h.Quantile(0.25), h.Max())
	}
	for range exactSamples {
		h.Record(1 << 20)
	}
	if h.octaves == nil || h.Count() != 4+exactSamples {
		t.Fatalf("count %d, buckets %v", h.Count(), h.octaves != nil)
	}
	if got := h.Quantile(0.05); got != 0 {
		t.Fatalf("after bucketing, q0.05 = %d, want the 0 sample", got)
	}
	if got := h.Quantile(0.25); got < 49505 || got > 50505 {
		t.Fatalf("after bucketing, q0.25 = %d, want 50005 within 1%%", got)
	}
}

func TestBucketCountsCarryPastUint32(t *testing.T) {
	var h Histogram
	for range exactSamples + 1 {
		h.Record(1000)
	}
	octave, index := bucket(1000)
	h.octaves[octave][index] = math.MaxUint32 // as if 2^32 - 1 samples had come
	h.count = math.MaxUint32
	h.Record(1000)
	h.Record(5000)
	if got := h.at(octave, index); got != 1<<32 {
		t.Fatalf("bucket holds %d, want 2^32", got)
	}
	var merged Histogram
	merged.Merge(&h)
	merged.Merge(&h)
	if got := merged.at(octave, index); got != 1<<33 {
		t.Fatalf("merged bucket holds %d, want 2^33", got)
	}
	if got := merged.Quantile(0.999999999); got < 990 || got > 1010 {
		t.Fatalf("q(1 - 1e-9) = %d, want ~1000", got)
	}
	if got := merged.Quantile(1); got != 5000 {
		t.Fatalf("q1 = %d, want the maximum 5000", got)
	}
}
