//! Delivery latency histograms: log-linear buckets in nanoseconds, at most 0.78 %
//! relative error, fixed memory.
//!
//! Values below 128 ns get one bucket per nanosecond. Above, each power of two
//! [2^e, 2^(e+1)) is split into 64 buckets of width 2^(e-6); a bucket reports its
//! midpoint, at most 2^(e-7) from any value in it, i.e. within 1/128 (0.78 %) of it.
//! The range ends at 2^47 ns (39 hours, more than the longest run: T <= 24 h plus a
//! drain <= 1 h); anything longer lands in the last bucket. The maximum is kept
//! exactly.
//!
//! A client's `LatencyLog` keeps its buckets in 64-bucket chunks, one per power of
//! two, allocated the first time a latency falls in that range: a client whose
//! latencies span three octaves holds three chunks (1.5 KiB), not the whole range
//! (21 KiB), which matters at 100,000 clients. At most `CHUNKS` chunks exist, so the
//! memory is bounded whatever the number of deliveries. After the run the logs are
//! merged into one dense `LatencyHistogram`.

/// Buckets per chunk (per power of two above 64 ns).
const SUB_BUCKETS: usize = 64;
const SUB_BITS: u32 = 6;
/// Chunk 0: [0, 64) ns, width 1; chunk c >= 1: [2^(c+5), 2^(c+6)) ns.
pub const CHUNKS: usize = 42;
/// The highest power of two with its own chunk: [2^46, 2^47) ns.
const TOP_EXPONENT: u32 = (CHUNKS as u32) + 4;

/// Chunk and bucket of a latency in nanoseconds.
fn locate(nanos: u64) -> (usize, usize) {
    if nanos < SUB_BUCKETS as u64 {
        return (0, nanos as usize);
    }
    let exponent = 63 - nanos.leading_zeros();
    if exponent > TOP_EXPONENT {
        return (CHUNKS - 1, SUB_BUCKETS - 1);
    }
    let shift = exponent - SUB_BITS;
    let chunk = (exponent - SUB_BITS + 1) as usize;
    let bucket = ((nanos >> shift) as usize) - SUB_BUCKETS;
    (chunk, bucket)
}

/// The value a bucket reports: its midpoint (its only value when its width is 1).
/// The lowest value of a bucket.
fn lower_bound(chunk: usize, bucket: usize) -> u64 {
    if chunk == 0 {
        return bucket as u64;
    }
    ((SUB_BUCKETS + bucket) as u64) << (chunk as u32 - 1)
}

/// The bucket of `nanos` in the harness's layout (msgbench/histogram.py): the value
/// itself below 128, else shift * 64 + (nanos >> shift) with shift = bit_length - 7.
pub fn layout_index(nanos: u64) -> u64 {
    if nanos < 2 * SUB_BUCKETS as u64 {
        return nanos;
    }
    let shift = u64::from(64 - nanos.leading_zeros()) - 7;
    shift * SUB_BUCKETS as u64 + (nanos >> shift)
}

/// One client's latencies: sparse, bounded (see the module documentation).
#[derive(Debug)]
pub struct LatencyLog {
    chunks: [Option<Box<[u64; SUB_BUCKETS]>>; CHUNKS],
    count: u64,
    max_nanos: u64,
}

impl Default for LatencyLog {
    fn default() -> Self {
        Self {
            chunks: [const { None }; CHUNKS],
            count: 0,
            max_nanos: 0,
        }
    }
}

impl LatencyLog {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn record(&mut self, nanos: u64) {
        let (chunk, bucket) = locate(nanos);
        self.chunks[chunk].get_or_insert_with(|| Box::new([0; SUB_BUCKETS]))[bucket] += 1;
        self.count += 1;
        self.max_nanos = self.max_nanos.max(nanos);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Chunks allocated so far (for the memory test).
    pub fn chunks_in_use(&self) -> usize {
        self.chunks.iter().filter(|chunk| chunk.is_some()).count()
    }
}

/// Every client's latencies merged: dense, built once after the drain.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    count: u64,
    max_nanos: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self {
            counts: vec![0; CHUNKS * SUB_BUCKETS],
            count: 0,
            max_nanos: 0,
        }
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn merge(&mut self, log: &LatencyLog) {
        for (chunk, counts) in log.chunks.iter().enumerate() {
            if let Some(counts) = counts {
                let dense = &mut self.counts[chunk * SUB_BUCKETS..(chunk + 1) * SUB_BUCKETS];
                for (total, count) in dense.iter_mut().zip(counts.iter()) {
                    *total += count;
                }
            }
        }
        self.count += log.count;
        self.max_nanos = self.max_nanos.max(log.max_nanos);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max_nanos(&self) -> u64 {
        self.max_nanos
    }

    /// The q-quantile (0 < q <= 1) in nanoseconds: the bucket holding the
    /// ceil(q * count)-th smallest latency, reported as its midpoint but never above
    /// the exact maximum. 0 when nothing was recorded.
    /// The histogram as the protocol carries it: `[bucket, count]` pairs with
    /// count > 0 in the harness's layout (msgbench/histogram.py). That layout is
    /// this one renumbered (exact below 128, then 64 buckets per power of two),
    /// so each bucket here maps whole to the one of its lowest value.
    pub fn sparse(&self) -> Vec<(u64, u64)> {
        let mut pairs: Vec<(u64, u64)> = Vec::new();
        for (index, count) in self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, count)| **count > 0)
        {
            let bucket = layout_index(lower_bound(index / SUB_BUCKETS, index % SUB_BUCKETS));
            match pairs.last_mut() {
                Some((last, total)) if *last == bucket => *total += count,
                _ => pairs.push((bucket, *count)),
            }
        }
        pairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn every_value_is_within_a_percent_of_its_bucket() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut values: Vec<u64> = (0..300).collect();
        for exponent in 7..47 {
            let low = 1u64 << exponent;
            values.extend([low, low + 1, 2 * low - 1]);
            values.extend((0..200).map(|_| rng.random_range(low..2 * low)));
        }
        for value in values {
            let (chunk, bucket) = locate(value);
            assert!(chunk < CHUNKS && bucket < SUB_BUCKETS, "{value}");
            let lower = lower_bound(chunk, bucket);
            assert!(lower <= value, "{value} below its bucket's {lower}");
            // Each bucket here is one of the harness's, whole: the same index for
            // its lowest value and for this one.
            assert_eq!(layout_index(lower), layout_index(value), "{value}");
        }
    }

    #[test]
    fn values_beyond_the_range_land_in_the_last_bucket() {
        assert_eq!(locate(u64::MAX), (CHUNKS - 1, SUB_BUCKETS - 1));
        assert_eq!(locate((1 << 47) - 1), (CHUNKS - 1, SUB_BUCKETS - 1));
        assert_eq!(locate(1 << 46).0, CHUNKS - 1);
        let mut log = LatencyLog::new();
        log.record(u64::MAX);
        let mut merged = LatencyHistogram::new();
        merged.merge(&log);
        assert_eq!(merged.max_nanos(), u64::MAX);
    }

    #[test]
    fn layout_index_matches_the_harness() {
        // The vectors every language's bucket function is tested against (tests/test_histogram.py).
        for (value, bucket) in [
            (0, 0),
            (1, 1),
            (127, 127),
            (128, 128),
            (129, 128),
            (255, 191),
            (256, 192),
            (1000, 317),
            (65535, 703),
            (1_000_000, 954),
            (1_000_000_000, 1591),
            (1 << 40, 2240),
            (1 << 62, 3648),
        ] {
            assert_eq!(layout_index(value), bucket, "{value}");
        }
    }

    #[test]
    fn sparse_is_the_harness_layout_after_merging() {
        let mut a = LatencyLog::new();
        let mut b = LatencyLog::new();
        let mut want = std::collections::BTreeMap::new();
        for micros in 1..=10_000u64 {
            let log = if micros % 2 == 0 { &mut a } else { &mut b };
            log.record(micros * 1000 + micros % 7);
            *want
                .entry(layout_index(micros * 1000 + micros % 7))
                .or_insert(0u64) += 1;
        }
        for small in [0u64, 5, 63, 64, 100, 127, 128, 129, 255] {
            a.record(small);
            *want.entry(layout_index(small)).or_insert(0) += 1;
        }
        let mut merged = LatencyHistogram::new();
        merged.merge(&a);
        merged.merge(&b);
        assert_eq!(merged.sparse(), want.into_iter().collect::<Vec<_>>());
        assert_eq!(merged.max_nanos(), 10_000_000 + 10_000 % 7);
    }

    #[test]
    fn a_log_allocates_only_the_octaves_it_sees() {
        let mut log = LatencyLog::new();
        assert_eq!(log.chunks_in_use(), 0);
        for nanos in [20_000, 21_000, 30_000, 40_000] {
            log.record(nanos);
        }
        assert_eq!(log.chunks_in_use(), 2);
        assert_eq!(log.count(), 4);
        assert!(LatencyHistogram::new().sparse().is_empty());
    }
}
