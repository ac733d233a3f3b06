package histogram

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

// The vectors every language's bucket function is tested against
// (tests/test_histogram.py).
var layoutVectors = [][2]int64{{0, 0}, {1, 1}, {127, 127}, {128, 128}, {129, 128}, {255, 191}, {256, 192},
	{1000, 317}, {65535, 703}, {1000000, 954}, {1000000000, 1591}, {1 << 40, 2240}, {1 << 62, 3648}}

func TestLayoutIndexMatchesTheHarness(t *testing.T) {
	for _, v := range layoutVectors {
		if got := LayoutIndex(v[0]); got != v[1] {
			t.Errorf("LayoutIndex(%d) = %d, want %d", v[0], got, v[1])
		}
	}
}

// sparseOf counts values straight into the harness's layout.
func sparseOf(values []int64) [][2]int64 {
	counts := map[int64]int64{}
	for _, v := range values {
		counts[LayoutIndex(v)]++
	}
	pairs := make([][2]int64, 0, len(counts))
	for b, n := range counts {
		pairs = append(pairs, [2]int64{b, n})
	}
	slices.SortFunc(pairs, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	return pairs
}

func TestSparseIsTheHarnessLayoutAfterMerging(t *testing.T) {
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
	if got, want := merged.Sparse(), sparseOf(all); !slices.Equal(got, want) {
		t.Fatalf("sparse\n%v\nwant\n%v", got, want)
	}
}

func TestFewSamplesAreKeptAndReportedAlike(t *testing.T) {
	var h Histogram
	if len(h.Sparse()) != 0 || h.Max() != 0 {
		t.Fatal("empty histogram")
	}
	values := []int64{70001, 30003, 50005, -5}
	for _, v := range values {
		h.Record(v)
	}
	if h.octaves != nil {
		t.Fatal("four samples allocated buckets")
	}
	if got, want := h.Sparse(), sparseOf(values); !slices.Equal(got, want) || h.Max() != 70001 {
		t.Fatalf("sparse %v, want %v; max %d", got, want, h.Max())
	}
	for range exactSamples {
		h.Record(1 << 20)
		values = append(values, 1<<20)
	}
	if h.octaves == nil || h.Count() != uint64(len(values)) {
		t.Fatalf("count %d, buckets %v", h.Count(), h.octaves != nil)
	}
	if got, want := h.Sparse(), sparseOf(values); !slices.Equal(got, want) {
		t.Fatalf("after bucketing, sparse %v, want %v", got, want)
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
	want := [][2]int64{{LayoutIndex(1000), 1 << 33}, {LayoutIndex(5000), 2}}
	if got := merged.Sparse(); !slices.Equal(got, want) {
		t.Fatalf("sparse %v, want %v", got, want)
	}
}
