'use strict';
// Latency histograms in the harness's layout (msgbench/histogram.py): exact below 128,
// then 64 buckets per power of two, so a bucket is at most 1/64 of its value wide.
// The harness alone computes percentiles; a worker reports sparse [index, count] pairs.

const SUB_BITS = 6;
const SUB_BUCKETS = 1 << SUB_BITS;

// layoutIndex is the bucket of v ns: v itself below 128, else
// shift * 64 + (v >> shift) with shift = bit_length(v) - 7. Negative counts as 0.
function layoutIndex(v) {
  const value = BigInt(Math.max(0, Math.trunc(Number(v))));
  if (value < BigInt(2 * SUB_BUCKETS)) return Number(value);
  const shift = BigInt(value.toString(2).length - (SUB_BITS + 1));
  return Number(shift * BigInt(SUB_BUCKETS) + (value >> shift));
}

class Histogram {
  constructor() {
    this.counts = new Map();
    this.count = 0;
    this.max = 0;
  }

  record(v) {
    const value = Math.max(0, v);
    const index = value < 2 ** 31 ? smallIndex(value) : layoutIndex(value);
    this.counts.set(index, (this.counts.get(index) || 0) + 1);
    this.count += 1;
    if (value > this.max) this.max = value;
  }

  merge(other) {
    for (const [index, n] of other.counts) this.counts.set(index, (this.counts.get(index) || 0) + n);
    this.count += other.count;
    this.max = Math.max(this.max, other.max);
  }

  // sparse is the histogram as the protocol carries it: [index, count] pairs, by index.
  sparse() {
    return [...this.counts].sort((a, b) => a[0] - b[0]);
  }
}

// smallIndex is layoutIndex for 0 <= v < 2^31 in 32-bit integer arithmetic (the hot path).
function smallIndex(v) {
  const value = Math.trunc(v);
  if (value < 2 * SUB_BUCKETS) return value;
  const shift = 32 - Math.clz32(value) - (SUB_BITS + 1);
  return shift * SUB_BUCKETS + (value >>> shift);
}

module.exports = { layoutIndex, Histogram };
