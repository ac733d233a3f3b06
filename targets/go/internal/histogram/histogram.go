// Package histogram counts latencies in nanoseconds in the harness's
// log-linear layout (msgbench/core/histogram.py), for the chat and socket workloads.
package histogram

import (
	"math"
	"math/bits"
	"slices"
)

// The histogram's shape: exact below 64 ns, then 64 buckets per power of two.
const (
	subBits    = 6
	subBuckets = 1 << subBits
	// Octave 0 holds 0..63 exactly; octave k >= 1 holds [2^(k+5), 2^(k+6)) in
	// 64 buckets of 2^(k-1) ns. The largest int64 falls in octave 57.
	octaveCount = 64 - subBits
)

// exactSamples are the samples a histogram keeps as they are before it
// needs buckets.
const exactSamples = 8

// Histogram counts latencies in nanoseconds, log-linearly: a bucket is at
// most 1/64 of its lower bound wide, so its midpoint is within 1/128 (0.8%)
// of every value in it. Its memory is fixed whatever the number of samples:
// the first 8 samples are kept as they are, and from the 9th on buckets
// take over, at most 58 octaves of 64 counts, each octave allocated when it
// gets its first sample. A realistic client (a handful of deliveries) thus
// holds 80 bytes, a busy one the octaves its latencies span (256 bytes
// each), instead of 15 KiB each.
type Histogram struct {
	count   uint64
	max     int64
	first   [exactSamples]int64 // the samples, while count <= exactSamples
	octaves *[octaveCount]*[subBuckets]uint32
	// carries holds what a bucket's uint32 count wrapped past, by
	// octave*subBuckets + index: nil unless one client saw 2^32 latencies
	// in one bucket.
	carries map[int]uint64
}

// bucket locates v: its octave and its bucket in the octave.
func bucket(v int64) (octave, index int) {
	if v < subBuckets {
		return 0, int(v)
	}
	top := bits.Len64(uint64(v)) - 1 // 2^top <= v < 2^(top+1), top >= subBits
	shift := top - subBits
	return shift + 1, int(v>>shift) - subBuckets
}

// bounds are the lowest value of a bucket and its width.
func bounds(octave, index int) (lower, width int64) {
	if octave == 0 {
		return int64(index), 1
	}
	shift := octave - 1
	return int64(subBuckets+index) << shift, 1 << shift
}

// Record counts one latency of v ns (negative counts as 0).
func (h *Histogram) Record(v int64) {
	v = max(v, 0)
	if h.octaves == nil {
		if h.count < exactSamples {
			h.first[h.count] = v
			h.count++
			h.max = max(h.max, v)
			return
		}
		h.toBuckets()
	}
	octave, index := bucket(v)
	h.add(octave, index, 1)
	h.count++
	h.max = max(h.max, v)
}

// toBuckets moves the exact samples into buckets.
func (h *Histogram) toBuckets() {
	h.octaves = new([octaveCount]*[subBuckets]uint32)
	for _, v := range h.first[:h.count] {
		octave, index := bucket(v)
		h.add(octave, index, 1)
	}
}

// add counts n more in a bucket.
func (h *Histogram) add(octave, index int, n uint64) {
	counts := h.octaves[octave]
	if counts == nil {
		counts = new([subBuckets]uint32)
		h.octaves[octave] = counts
	}
	sum := uint64(counts[index]) + n
	counts[index] = uint32(sum)
	if carry := sum &^ math.MaxUint32; carry != 0 {
		if h.carries == nil {
			h.carries = map[int]uint64{}
		}
		h.carries[octave*subBuckets+index] += carry
	}
}

// at is a bucket's count.
func (h *Histogram) at(octave, index int) uint64 {
	return uint64(h.octaves[octave][index]) + h.carries[octave*subBuckets+index]
}

// each calls fn with every bucket holding samples and its count; while h
// keeps its samples exact, with each sample's bucket and 1 (a bucket may
// then come more than once).
func (h *Histogram) each(fn func(octave, index int, n uint64)) {
	if h.octaves == nil {
		for _, v := range h.first[:h.count] {
			octave, index := bucket(v)
			fn(octave, index, 1)
		}
		return
	}
	for octave, counts := range h.octaves {
		if counts == nil {
			continue
		}
		for index := range counts {
			if n := h.at(octave, index); n > 0 {
				fn(octave, index, n)
			}
		}
	}
}

// Merge adds other's samples into h, which then counts in buckets.
func (h *Histogram) Merge(other *Histogram) {
	if h.octaves == nil {
		h.toBuckets()
	}
	other.each(h.add)
	h.count += other.count
	h.max = max(h.max, other.max)
}

// Count is the number of samples.
func (h *Histogram) Count() uint64 { return h.count }

// Max is the largest sample, exact (0 without samples).
func (h *Histogram) Max() int64 { return h.max }

// Sparse is the histogram as the protocol carries it: [bucket, count] pairs
// with count > 0 in the harness's layout (msgbench/core/histogram.py). That layout
// is this one renumbered: exact below 128, then 64 buckets per power of two;
// every bucket here lies inside one there (octave k >= 2 is shift k - 1 at
// the same width), so each maps whole to the bucket of its lower bound.
func (h *Histogram) Sparse() [][2]int64 {
	counts := map[int64]int64{}
	h.each(func(octave, index int, n uint64) {
		lower, _ := bounds(octave, index)
		counts[LayoutIndex(lower)] += int64(n)
	})
	pairs := make([][2]int64, 0, len(counts))
	for bucket, n := range counts {
		pairs = append(pairs, [2]int64{bucket, n})
	}
	slices.SortFunc(pairs, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	return pairs
}

// LayoutIndex is the bucket of v ns in the harness's layout
// (msgbench/core/histogram.py): v itself below 128, else shift*64 + v>>shift with
// shift = bit_length(v) - 7. Negative values count as 0.
func LayoutIndex(v int64) int64 {
	v = max(v, 0)
	if v < 2*subBuckets {
		return v
	}
	shift := int64(bits.Len64(uint64(v)) - (subBits + 1))
	return shift*subBuckets + v>>shift
}
