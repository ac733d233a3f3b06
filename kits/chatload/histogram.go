package main

import (
	"math/bits"
	"sync/atomic"
)

// Histogram counts values (ns) in msgbench/histogram.py's layout: exact below
// 128, then 64 sub-buckets per power of two. Its buckets are atomic, so
// every client's reader records into one shared histogram without a lock.
type Histogram struct {
	buckets [largestIndex + 1]atomic.Uint64
	max     atomic.Int64
}

const (
	subBuckets   = 64
	exactBelow   = 2 * subBuckets
	largestIndex = (63-7)*subBuckets + (1<<63-1)>>(63-7)
)

// bucketIndex is histogram.py's index(v).
func bucketIndex(v int64) int {
	if v < exactBelow {
		return int(max(v, 0))
	}
	shift := bits.Len64(uint64(v)) - 7
	return shift*subBuckets + int(v>>shift)
}

// Record counts one value; a negative one counts as 0.
func (h *Histogram) Record(v int64) {
	v = max(v, 0)
	h.buckets[bucketIndex(v)].Add(1)
	for {
		old := h.max.Load()
		if v <= old || h.max.CompareAndSwap(old, v) {
			return
		}
	}
}

// Max is the largest value recorded (0 if none).
func (h *Histogram) Max() int64 { return h.max.Load() }

// Sparse is the histogram as the protocol carries it: [bucket, count] pairs.
func (h *Histogram) Sparse() [][2]int64 {
	pairs := [][2]int64{}
	for i := range h.buckets {
		if n := h.buckets[i].Load(); n > 0 {
			pairs = append(pairs, [2]int64{int64(i), int64(n)})
		}
	}
	return pairs
}
